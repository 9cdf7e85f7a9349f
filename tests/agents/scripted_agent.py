"""A stand-in agent for the command executor's tests. Its behaviour is chosen by
AGENT_MODE: ok (asks a question, then writes answer.txt on the follow-up),
garbage, crash, hang (with a child process), slow, no-git (removes its .git)."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

mode = os.environ.get("AGENT_MODE", "ok")
prompt = sys.stdin.read()
session = os.environ.get("WORKBENCH_SESSION")
log = os.environ.get("AGENT_LOG")
if log:
    with open(log, "a") as handle:
        handle.write(json.dumps({"cwd": os.getcwd(), "session": session, "prompt": prompt}) + "\n")


def emit(message):
    message["session_id"] = "scripted-1"
    print(json.dumps(message), flush=True)


if mode == "garbage":
    print("this is not json")
    sys.exit(0)
if mode == "crash":
    print("Traceback: the agent fell over", file=sys.stderr)
    sys.exit(3)
if mode == "hang":
    child = subprocess.Popen(["sleep", "300"])
    Path(os.environ["AGENT_CHILD_PID"]).write_text(str(child.pid))
    time.sleep(300)
if mode == "no-git":  # removes its repository's .git, as a careless agent can
    import shutil

    shutil.rmtree(".git", ignore_errors=True)
if mode == "slow":
    time.sleep(float(os.environ.get("AGENT_DELAY", "0.4")))
emit({"type": "system", "subtype": "init"})
if session is None:
    emit({"type": "assistant", "message": {"content": [{"type": "text", "text": "Which format do you want?"}]}})
else:
    emit(
        {
            "type": "assistant",
            "message": {
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Write",
                        "input": {"file_path": "answer.txt", "content": prompt},
                    }
                ]
            },
        }
    )
    Path("answer.txt").write_text(prompt)
    emit({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}})
    emit({"type": "assistant", "message": {"content": [{"type": "text", "text": "Done."}]}})
emit({"type": "result", "subtype": "success", "result": "ok", "usage": {"input_tokens": 10, "output_tokens": 5}})
