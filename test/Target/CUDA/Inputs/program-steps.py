"""Prints each step of the Programs gnn-translate --gnn-to-program wrote (one
JSON document per function, one after another) as `program step overlaps`:
a launch's kernel, or another step's op."""
import json
import sys

text = open(sys.argv[1]).read()
decoder, at = json.JSONDecoder(), 0
while True:
    while at < len(text) and text[at].isspace():
        at += 1
    if at == len(text):
        break
    program, at = decoder.raw_decode(text, at)
    for step in program["steps"]:
        print(program["name"], step.get("kernel", step["op"]), step.get("overlaps", 0))
