#!/usr/bin/env python3
"""Drive crucible's verl tool the way verl's agent loop does, without verl or a model.

verl's ToolAgentLoop (verl/experimental/agent_loop/tool_agent_loop.py, ``_call_tool``)
builds its tools from the tool-config YAML (``initialize_tools_from_config``: the class
named by ``class_name``, constructed as ``cls(config=..., tool_schema=...)``), and for every
tool call of a trajectory does::

    instance_id, _ = await tool.create(create_kwargs=tools_kwargs[name].get("create_kwargs", {}))
    response, reward, metrics = await tool.execute(instance_id, args, agent_data=agent_data)
    await tool.release(instance_id)

with the trajectory's ``AgentData`` (its ``request_id`` names the trajectory). This script
makes the same calls for two trajectories of two turns each: the first turn of a trajectory
writes a file, the second reads it back (state kept across calls), and the trajectories do
not see each other's files. When a trajectory's AgentData goes away, its session is deleted.

    PYTHONPATH=clients/python python3 clients/python/examples/verl_tool_demo.py

Exit status 0 when every check held.
"""

import argparse
import asyncio
import gc
import json
import os
import sys
import uuid

from crucible_client import Client, CrucibleError
from crucible_client.verl_tool import HAVE_VERL, OpenAIFunctionToolSchema

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.join(HERE, "verl_crucible_tool_config.yaml")


class AgentData:
    """The fields of verl's AgentData a tool may use: the trajectory's request_id and
    extra_fields (where the tool leaves the session id)."""

    def __init__(self):
        self.request_id = uuid.uuid4().hex
        self.extra_fields = {}


def load_tools(path, url):
    """verl's initialize_tools_from_config, for native tools (PyYAML reads the file)."""
    import importlib

    import yaml

    with open(path) as f:
        cfg = yaml.safe_load(f)
    tools = []
    for entry in cfg["tools"]:
        module, cls_name = entry["class_name"].rsplit(".", 1)
        cls = getattr(importlib.import_module(module), cls_name)
        config = dict(entry["config"])
        config["url"] = url
        schema = entry.get("tool_schema")
        tools.append(cls(config=config,
                         tool_schema=OpenAIFunctionToolSchema.model_validate(schema) if schema else None))
    return {t.name: t for t in tools}


async def call_tool(tool, args, agent_data, tools_kwargs):
    """verl's _call_tool: a fresh instance per call, released at once."""
    instance_id, _ = await tool.create(create_kwargs=tools_kwargs.get("create_kwargs", {}))
    try:
        return await tool.execute(instance_id, args, agent_data=agent_data)
    finally:
        await tool.release(instance_id)


async def demo(url, log=print):
    tools = load_tools(CONFIG, url)
    tool = tools["code_interpreter"]
    log("tool %s (verl %s)" % (type(tool).__name__, "installed" if HAVE_VERL else "not installed: fallback base class"))
    kwargs = {"create_kwargs": {"files": {"data/numbers.txt": "3 1 4 1 5 9 2 6\n"}}}
    a, b = AgentData(), AgentData()
    checks = {}

    # Turn 1 of each trajectory: compute something and leave it in a file.
    resp, reward, metrics = await call_tool(tool, {"code": (
        "nums = list(map(int, open('data/numbers.txt').read().split()))\n"
        "open('state.json', 'w').write(str(sum(nums)))\n"
        "print('sum', sum(nums))\n")}, a, kwargs)
    log("A turn 1: %r %s" % (resp.text, metrics))
    checks["turn 1 ran"] = resp.text == "sum 31\n"
    await call_tool(tool, {"code": "open('state.json', 'w').write('other')\n"}, b, kwargs)

    # Turn 2: the file of turn 1 is still there (the same session), and B's is B's.
    resp, _, _ = await call_tool(tool, {"code": "print(open('state.json').read())"}, a, kwargs)
    log("A turn 2: %r" % resp.text)
    checks["state kept across calls"] = resp.text == "31\n"
    resp, _, _ = await call_tool(tool, {"code": "echo $((6 * 7)); cat state.json", "language": "bash"}, b, kwargs)
    log("B turn 2: %r" % resp.text)
    checks["trajectories apart"] = resp.text == "42\nother\n"
    resp, _, metrics = await call_tool(tool, {"code": "import sys; sys.exit('boom')"}, a, kwargs)
    log("A turn 3: %r %s" % (resp.text, metrics))
    checks["a failure is shown to the model"] = "boom" in resp.text and metrics["exit_code"] == 1

    sid = a.extra_fields["crucible_session"]
    checks["session id left in AgentData.extra_fields"] = sid == metrics["session"]
    # The trajectory ends: the agent loop drops its AgentData; the session goes with it.
    del a
    gc.collect()
    client = Client(url)
    for _ in range(600):  # the deletion runs in a thread of its own: wait up to a minute
        if _gone(client, sid):
            break
        await asyncio.sleep(0.1)
    checks["session deleted at the end of the trajectory"] = _gone(client, sid)
    tool.close_all()
    return checks


def _gone(client, sid):
    try:
        client.request("GET", "/v1/sessions/" + sid)
        return False
    except CrucibleError as e:
        return e.status == 404


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", default=os.environ.get("CRUCIBLE_URL", "http://127.0.0.1:8080"))
    args = ap.parse_args()
    checks = asyncio.run(demo(args.url))
    print(json.dumps(checks, indent=1))
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
