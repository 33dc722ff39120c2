#===- StaticLLVM.cmake - link LLVM statically -----------------*- cmake -*-===#
#
# Debian's MLIR CMake exports make every MLIR library depend on the imported
# target `LLVM`, the shared libLLVM. Binaries built that way do not run on a
# machine without LLVM (the GPU machine). Here the imported target is pointed at
# a linker script that groups the static LLVM archives instead, so the MLIR
# static libraries resolve against them and the tools carry no libLLVM.
#
#===------------------------------------------------------------------------===#
find_program(GNNC_LLVM_CONFIG llvm-config HINTS "${LLVM_TOOLS_BINARY_DIR}" REQUIRED)
execute_process(
  COMMAND ${GNNC_LLVM_CONFIG} --link-static --libfiles
          support demangle targetparser core binaryformat remarks
          bitstreamreader
  OUTPUT_VARIABLE _gnnc_llvm_archives OUTPUT_STRIP_TRAILING_WHITESPACE
  COMMAND_ERROR_IS_FATAL ANY)
separate_arguments(_gnnc_llvm_archives UNIX_COMMAND "${_gnnc_llvm_archives}")

# System libraries LLVM needs; zlib and zstd come as archives where present so
# the tools depend only on glibc and libstdc++.
set(_gnnc_sys "")
foreach(_lib z zstd)
  find_library(GNNC_STATIC_${_lib} NAMES lib${_lib}.a)
  if(GNNC_STATIC_${_lib})
    list(APPEND _gnnc_sys "${GNNC_STATIC_${_lib}}")
  else()
    list(APPEND _gnnc_sys "-l${_lib}")
  endif()
endforeach()

string(JOIN " " _gnnc_group ${_gnnc_llvm_archives} ${_gnnc_sys})
set(_gnnc_script "${CMAKE_BINARY_DIR}/lib/libGNNCStaticLLVM.a")
file(WRITE "${_gnnc_script}" "GROUP ( ${_gnnc_group} )\n")

if(TARGET LLVM)
  foreach(_cfg "" _RELEASE _RELWITHDEBINFO _DEBUG _MINSIZEREL)
    set_target_properties(LLVM PROPERTIES IMPORTED_LOCATION${_cfg} "${_gnnc_script}")
  endforeach()
  set_target_properties(LLVM PROPERTIES
    IMPORTED_SONAME "" IMPORTED_NO_SONAME TRUE
    INTERFACE_LINK_LIBRARIES "pthread;dl;m;rt")
endif()
message(STATUS "gnnc: LLVM linked statically through ${_gnnc_script}")
