# Writes N zero bytes to standard output and ends with status 0 even when the
# reader closes the pipe first: zeros-to-pipe.py N. A tool that stops reading
# at its input limit closes the pipe early; `head -c N /dev/zero` then dies of
# SIGPIPE (status 141), which lit's pipefail reported as the test failing,
# depending on which side of the pipe ran first.
import os
import sys

data = bytes(int(sys.argv[1]))
try:
    while data:
        data = data[os.write(1, data):]
except BrokenPipeError:
    pass
