func.func @ok() {
  return
}

// -----

func.func @bad( {
