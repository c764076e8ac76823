"""Sessions through the Python client against a real ``crucible serve``.

The multi-turn loop of the issue (a buggy file, its tests failing, the failure read, the
fix, verification with reward 1), the verl tool as verl's agent loop drives it, the
``Sandbox`` adapters, fork divergence, tar transfers both ways (and a hostile tree made
inside the session refused on the way out), and the errors: 404 after close, 400 for a bad
path, 409 while another operation runs. The examples in ``clients/python/examples`` are run
as scripts too. The server is ``$CRUCIBLE`` (default ``<repo>/build/crucible``); everything
is skipped when it has no ``serve`` command.
"""

import asyncio
import base64
import gc
import io
import os
import stat
import subprocess
import sys
import tarfile
import threading
import time
import uuid
from pathlib import Path

import pytest

from crucible_client import Client, CrucibleError, CrucibleSessionBusy, Session, UnsafeArchive
from crucible_client.agents import AsyncSandbox, CommandFailed, Sandbox
from crucible_client.session import safe_extract_tar
from crucible_client.verl_tool import CrucibleSessionTool, ToolResponse

from serving import Server, no_serve_reason

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples"
sys.path.insert(0, str(EXAMPLES))

import multi_turn_fix  # noqa: E402  (the example's task and files)

PYTEST = ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_stats.py"]


def gone(client, sid):
    """True when the server answers 404 for the session."""
    try:
        client.request("GET", "/v1/sessions/" + sid)
    except CrucibleError as e:
        return e.status == 404
    return False


# --- the multi-turn loop ---------------------------------------------------------------


def test_multi_turn_loop_buggy_fail_fix_verify(client):
    with client.session() as s:
        assert s.last_info["parent"] is None and s.id in [x["id"] for x in client.sessions()["sessions"]]
        s.write("test_stats.py", multi_turn_fix.TESTS)
        s.write("stats.py", multi_turn_fix.BUGGY)
        r = s.exec(PYTEST, timeout_s=60)
        assert r["status"] == "runtime_error" and r["exit_code"] == 1, r
        assert "test_even" in r["stdout"] and "1 failed, 1 passed" in r["stdout"], r["stdout"]
        assert r["session"] == s.id
        rec = s.verify(multi_turn_fix.TASK)
        assert rec["reward"] == 0 and rec["verdict"] != "accepted", rec
        # The agent reads the failure and fixes the file; the tests pass in the same session.
        assert s.read("stats.py") == multi_turn_fix.BUGGY.encode()
        s.write("stats.py", multi_turn_fix.FIXED)
        r = s.exec(PYTEST, timeout_s=60)
        assert r["exit_code"] == 0 and "2 passed" in r["stdout"], r
        rec = s.verify(multi_turn_fix.TASK)
        assert rec["verdict"] == "accepted" and rec["reward"] == 1, rec
        # Verification left the session alive and its files as they were.
        assert s.read("stats.py") == multi_turn_fix.FIXED.encode()
        assert s.info()["execs"] >= 2
    assert gone(client, s.id)


def test_verify_uses_the_task_tests_not_the_agents(client):
    """An agent that rewrites the tests to pass does not earn the reward: the task's own
    test file is written before its command runs."""
    with client.session() as s:
        s.write("stats.py", multi_turn_fix.BUGGY)
        s.write("test_stats.py", "def test_nothing():\n    pass\n")
        assert s.exec(PYTEST, timeout_s=60)["exit_code"] == 0
        assert s.verify(multi_turn_fix.TASK)["reward"] == 0


def test_state_and_exec_forms(client):
    with client.session() as s:
        r = s.exec("echo one > a.txt && echo $GREETING", env={"GREETING": "hi"})
        assert (r["status"], r["stdout"]) == ("ok", "hi\n"), r
        assert s.exec(["cat", "a.txt"])["stdout"] == "one\n"
        r = s.exec(["cat"], stdin=b"\x00\x01binary\xff")  # not UTF-8: escaped text, exact base64
        assert base64.b64decode(r["stdout_base64"]) == b"\x00\x01binary\xff", r
        assert s.exec(["pwd"], cwd="/tmp")["stdout"] == "/tmp\n"
        r = s.exec(code="import os\nprint(sorted(os.listdir('.')))", language="python")
        assert r["status"] == "ok" and "'a.txt'" in r["stdout"], r
        r = s.exec("sleep 30", timeout_s=1)
        assert r["status"] == "timeout", r
        assert s.exec(["cat", "a.txt"])["stdout"] == "one\n"  # the session outlived the timeout


# --- files ---------------------------------------------------------------------------


def test_write_read_list_binary_and_mode(client):
    data = bytes(range(256)) * 3
    with client.session() as s:
        assert s.write("bin/data.bin", data)["size"] == len(data)
        assert s.read("bin/data.bin") == data
        s.write("bin/run.sh", "#!/bin/sh\necho ran\n", mode=0o755)
        assert s.exec(["./bin/run.sh"])["stdout"] == "ran\n"
        ents = {e["name"]: e for e in s.listdir("bin")}
        assert ents["data.bin"]["type"] == "file" and ents["data.bin"]["size"] == len(data)
        assert ents["run.sh"]["mode"] & 0o777 == 0o755
        assert s.write("/tmp/x.txt", "")["size"] == 0 and s.read("/tmp/x.txt") == b""
        assert s.read_text("bin/run.sh").startswith("#!/bin/sh")


def test_tar_round_trip(client, tmp_path):
    src = tmp_path / "src"
    (src / "pkg" / "deep").mkdir(parents=True)
    (src / "pkg" / "__init__.py").write_text("X = 1\n")
    (src / "pkg" / "deep" / "blob.bin").write_bytes(bytes(range(256)))
    tool = src / "tool.sh"
    tool.write_text("#!/bin/sh\necho tool\n")
    tool.chmod(0o755)
    os.symlink("pkg/__init__.py", src / "link.py")
    with client.session() as s:
        ans = s.upload_dir(src, "proj")
        assert ans["entries"] >= 5, ans
        assert s.exec("cd proj && ./tool.sh && python3 -c 'import pkg; print(pkg.X)' && readlink link.py"
                      )["stdout"] == "tool\n1\npkg/__init__.py\n"
        s.exec("cd proj && echo made-inside > new.txt")
        dst = tmp_path / "dst"
        n = s.download_dir("proj", dst)
        assert n >= 6
    assert (dst / "pkg" / "deep" / "blob.bin").read_bytes() == bytes(range(256))
    assert (dst / "new.txt").read_text() == "made-inside\n"
    assert os.readlink(dst / "link.py") == "pkg/__init__.py"
    assert stat.S_IMODE((dst / "tool.sh").stat().st_mode) & 0o100


def test_download_refuses_what_the_session_made_hostile(client, tmp_path):
    """Links made by code in the session that lead out of the destination are refused on
    the way out, before anything is written."""
    dst = tmp_path / "out"
    with client.session() as s:
        for target in ("/etc/passwd", "../../escape"):
            s.exec("rm -rf t && mkdir t && echo ok > t/fine.txt && ln -s %s t/evil" % target)
            with pytest.raises(UnsafeArchive) as ei:
                s.download_dir("t", dst)
            assert "evil" in str(ei.value)
            assert not dst.exists()
        # A link to the destination root, then one through it: each harmless-looking alone.
        s.exec("rm -rf t && mkdir t && ln -s . t/r && ln -s r/.. t/up")
        with pytest.raises(UnsafeArchive):
            s.download_dir("t", dst)
        assert not dst.exists()


def test_upload_of_a_hostile_tar_is_refused(client):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        good = tarfile.TarInfo("ok.txt")
        good.size = 2
        tf.addfile(good, io.BytesIO(b"ok"))
        bad = tarfile.TarInfo("../outside.txt")
        bad.size = 2
        tf.addfile(bad, io.BytesIO(b"no"))
    with client.session() as s:
        with pytest.raises(CrucibleError) as ei:
            s.upload_tar("in", buf.getvalue())
        assert ei.value.status == 400 and "outside" in ei.value.message
        assert s.exec("ls in 2>&1; ls /work")["stdout"].count("ok.txt") == 0  # nothing written


# --- fork ----------------------------------------------------------------------------


def test_fork_diverges_from_its_parent(client):
    with client.session() as parent:
        parent.write("f.txt", "parent\n")
        a, b = parent.fork(2)
        try:
            assert a.last_info["parent"] == parent.id and b.last_info["parent"] == parent.id
            assert len({parent.id, a.id, b.id}) == 3
            assert a.read("f.txt") == b"parent\n"
            a.write("f.txt", "child a\n")
            a.exec("echo only-a > a-only.txt")
            assert parent.read("f.txt") == b"parent\n"
            assert b.read("f.txt") == b"parent\n"
            assert parent.exec("ls")["stdout"].split() == ["f.txt"]
            parent.write("f.txt", "parent 2\n")
            assert a.read("f.txt") == b"child a\n" and b.read("f.txt") == b"parent\n"
            c = a.fork()
            with c:
                assert c.read("a-only.txt") == b"only-a\n" and c.info()["parent"] == a.id
        finally:
            a.close()
            b.close()


# --- errors --------------------------------------------------------------------------


def test_errors_404_400_and_close(client):
    s = client.session()
    s.close()
    s.close()  # idempotent
    assert s.closed
    for call in (lambda: s.exec(["true"]), lambda: s.read("x"), lambda: s.info(),
                 lambda: s.fork(), lambda: s.write("x", "y")):
        with pytest.raises(CrucibleError) as ei:
            call()
        assert ei.value.status == 404 and ei.value.code == "not_found", ei.value
    with pytest.raises(CrucibleError) as ei:
        Session(client, "s-" + "0" * 24).exec(["true"])
    assert ei.value.status == 404
    with pytest.raises(ValueError):
        Session(client, "../v1/run")
    with client.session() as s:
        for bad in ("../etc/passwd", "/etc/passwd", "a//b"):
            with pytest.raises(CrucibleError) as ei:
                s.write(bad, "x")
            assert ei.value.status == 400, (bad, ei.value)
        with pytest.raises(CrucibleError) as ei:
            s.read("missing.txt")
        assert ei.value.status == 404
        s.exec("mkdir d && ln -s /etc/hostname link")
        with pytest.raises(CrucibleError) as ei:
            s.read("d")
        assert ei.value.status == 400
        with pytest.raises(CrucibleError) as ei:
            s.read("link")  # never followed by the server
        assert ei.value.status == 400
        with pytest.raises(CrucibleError) as ei:
            s.exec(code="print(1)", language="no-such-language")
        assert ei.value.status == 400


def test_busy_session_is_409(client):
    with client.session() as s:
        out = {}

        def long_exec():
            out["r"] = s.exec("sleep 3; echo slept", timeout_s=20)

        t = threading.Thread(target=long_exec, daemon=True)
        t.start()
        try:
            refused = None
            while t.is_alive() and refused is None:  # as long as the long exec runs
                if s.info()["busy"]:
                    try:
                        s.exec(["true"])
                    except CrucibleSessionBusy as e:
                        refused = e
                time.sleep(0.02)
            assert refused is not None, "no 409 while an exec ran"
            assert refused.status == 409 and refused.code == "session_busy"
        finally:
            t.join(60)
        assert out["r"]["stdout"] == "slept\n"
        assert s.exec(["true"])["status"] == "ok"  # free again


# --- the verl tool -------------------------------------------------------------------


def _tool(server, **config):
    cfg = {"type": "native", "url": server.url, "default_timeout": 30}
    cfg.update(config)
    return CrucibleSessionTool(config=cfg, tool_schema=None)


def test_verl_tool_one_instance_per_trajectory(server, client):
    """create, execute twice with the state kept, release (an instance for the whole
    trajectory, as verl's earlier rollout kept one)."""
    tool = _tool(server)
    assert tool.name == "code_interpreter"

    async def run():
        iid, resp = await tool.create(files={"in.txt": "21\n"})
        assert isinstance(resp, ToolResponse)
        r1, reward, m1 = await tool.execute(iid, {"code": "x = int(open('in.txt').read())\n"
                                                          "open('out.txt', 'w').write(str(2 * x))\n"
                                                          "print('wrote')"})
        r2, _, m2 = await tool.execute(iid, {"code": "cat out.txt", "language": "bash"})
        r3, _, m3 = await tool.execute(iid, {"code": "1/0"})
        r4, _, m4 = await tool.execute(iid, {"nope": 1})
        await tool.release(iid)
        return (r1, reward, m1), (r2, m2), (r3, m3), (r4, m4)

    (r1, reward, m1), (r2, m2), (r3, m3), (r4, m4) = asyncio.run(run())
    assert (r1.text, reward, m1["status"]) == ("wrote\n", 0.0, "ok")
    assert r2.text == "42\n" and m2["session"] == m1["session"]
    assert "ZeroDivisionError" in r3.text and "[exit code 1]" in r3.text and m3["exit_code"] == 1
    assert r4.text.startswith("Error:") and m4["status"] == "bad_call"
    assert gone(client, m1["session"])  # release deleted it


def test_verl_tool_as_the_agent_loop_calls_it(server, client):
    """verl's ToolAgentLoop: an instance per call (create, execute with agent_data,
    release); the trajectory (agent_data.request_id) keeps its session across calls, and
    its end (AgentData collected) deletes it."""
    tool = _tool(server)

    class AgentData:
        def __init__(self):
            self.request_id = uuid.uuid4().hex
            self.extra_fields = {}

    async def call(agent_data, args):
        iid, _ = await tool.create(create_kwargs={"files": {"seed.txt": "seed\n"}})
        try:
            return await tool.execute(iid, args, agent_data=agent_data)
        finally:
            await tool.release(iid)

    async def run(a, b):
        await call(a, {"code": "open('mine.txt', 'w').write('A')"})
        await call(b, {"code": "open('mine.txt', 'w').write('B')"})
        ra = await call(a, {"code": "print(open('mine.txt').read(), open('seed.txt').read().strip())"})
        rb = await call(b, {"code": "print(open('mine.txt').read())"})
        # Two calls of one trajectory at once (max_parallel_calls): serialised, not a 409.
        both = await asyncio.gather(call(a, {"code": "import time; time.sleep(0.5); print(1)"}),
                                    call(a, {"code": "print(2)"}))
        return ra, rb, both

    a, b = AgentData(), AgentData()
    ra, rb, both = asyncio.run(run(a, b))
    assert ra[0].text == "A seed\n" and rb[0].text == "B\n"
    assert sorted(r[0].text for r in both) == ["1\n", "2\n"]
    sid_a, sid_b = a.extra_fields["crucible_session"], b.extra_fields["crucible_session"]
    assert sid_a != sid_b and ra[2]["session"] == sid_a
    assert not gone(client, sid_a)  # release of a per-call instance keeps the trajectory's
    del a
    gc.collect()
    deadline = time.monotonic() + 60  # the deletion runs in a thread of its own
    while not gone(client, sid_a) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert gone(client, sid_a) and not gone(client, sid_b)
    tool.close_all()
    assert gone(client, sid_b)


def test_verl_tool_calc_reward_and_expired_session(server, client):
    tool = _tool(server)

    async def run():
        iid, _ = await tool.create(create_kwargs={"task": multi_turn_fix.TASK,
                                                  "files": {"test_stats.py": multi_turn_fix.TESTS}})
        await tool.execute(iid, {"code": "open('stats.py', 'w').write(%r)" % multi_turn_fix.BUGGY})
        before = await tool.calc_reward(iid)
        await tool.execute(iid, {"code": "open('stats.py', 'w').write(%r)" % multi_turn_fix.FIXED})
        after = await tool.calc_reward(iid)
        # The server reclaims the session behind the tool's back: the next call says so.
        sid = tool._slots[("instance", iid)].session.id
        client.request("DELETE", "/v1/sessions/" + sid)
        resp, _, m = await tool.execute(iid, {"code": "import os; print(os.path.exists('stats.py'))"})
        await tool.release(iid)
        return before, after, resp, m, sid

    before, after, resp, m, sid = asyncio.run(run())
    assert (before, after) == (0.0, 1.0)
    assert "expired" in resp.text and resp.text.endswith("False\n") and m["session"] != sid


# --- the Sandbox adapters ------------------------------------------------------------


def test_sync_sandbox(server, client, tmp_path):
    local = tmp_path / "script.sh"
    local.write_text("#!/bin/sh\necho from-host\n")
    local.chmod(0o750)
    with Sandbox(server.url) as sb:
        assert sb.exec("echo hello") == "hello\n"
        with pytest.raises(CommandFailed) as ei:
            sb.exec("echo out; echo err >&2; exit 3")
        assert isinstance(ei.value, subprocess.CalledProcessError)
        assert (ei.value.returncode, ei.value.output, ei.value.stderr) == (3, "out\n", "err\n")
        assert sb.run("exit 5") == (5, "", "")
        assert sb.run("sleep 10", timeout=1)[0] == 124
        sb.write_file("notes/a.txt", "text")
        sb.write_file("b.bin", b"\xff\x00")
        assert sb.read_file("notes/a.txt") == "text" and sb.download_file("b.bin") == b"\xff\x00"
        sb.upload_file(local, "bin/script.sh")
        assert sb.exec("bin/script.sh") == "from-host\n"
        child = sb.fork()
        with child:
            sb.write_file("notes/a.txt", "changed")
            assert child.read_file("notes/a.txt") == "text"
        assert not child.is_alive()
        assert sb.is_alive()
        assert sb.run_code("print(2 ** 10)")["stdout"] == "1024\n"
    assert not sb.is_alive() and gone(client, sb.sandbox_id)


def test_async_sandbox(server, client, tmp_path):
    async def run():
        async with AsyncSandbox(server.url) as sb:
            sid = sb.sandbox_id
            assert await sb.exec("echo hi; exit 2") == (2, "hi\n", "")
            with pytest.raises(RuntimeError) as ei:  # what slime's callers catch
                await sb.exec("echo no >&2; exit 1", check=True)
            assert isinstance(ei.value, CommandFailed) and ei.value.stderr == "no\n"
            await sb.write_file("/work/p.txt", tmp_path.joinpath("p.txt"))
            assert await sb.read_file("p.txt") == "from a path"
            assert await sb.read_file("missing.txt") == ""
            child = await sb.fork()
            assert await child.read_file("p.txt") == "from a path"
            await child.close()
        return sid

    tmp_path.joinpath("p.txt").write_text("from a path")
    sid = asyncio.run(run())
    assert gone(client, sid)


# --- the examples --------------------------------------------------------------------


@pytest.mark.parametrize("script,args,expect", [
    ("multi_turn_fix.py", [], "verify: verdict accepted, reward 1"),
    ("grpo_fork.py", ["--n", "4"], "group rewards [1.0, 0.0, 1.0, 0.0]"),
    ("verl_tool_demo.py", [], '"session deleted at the end of the trajectory": true'),
])
def test_examples_run(server, script, args, expect):
    env = dict(os.environ, PYTHONPATH=str(HERE.parent), PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run([sys.executable, str(EXAMPLES / script), "--url", server.url] + args,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, timeout=300)
    out = r.stdout.decode("utf-8", "replace")
    assert r.returncode == 0, out
    assert expect in out, out


def test_safe_extract_of_a_real_download(client, tmp_path):
    """The archive the server makes passes the client's own checks as they are."""
    with client.session() as s:
        s.exec("mkdir -p a/b && echo 1 > a/b/c && ln -s b/c a/l")
        data = s.download_tar("a")
    assert safe_extract_tar(data, tmp_path / "x") >= 3
    assert (tmp_path / "x" / "l").read_text() == "1\n"


def test_verify_by_task_id_of_the_library(tmp_path):
    """A server with a task library (--db): the session verifies against a task by id."""
    reason = no_serve_reason()
    if reason:
        pytest.skip(reason)
    srv = Server("--slots", "1", "--db", str(tmp_path / "lib.db"))
    try:
        c = Client(srv.url, timeout=120)
        assert c.import_tasks([multi_turn_fix.TASK])["new"] == 1
        with c.session() as s:
            s.write("stats.py", multi_turn_fix.FIXED)
            rec = s.verify(task_id=multi_turn_fix.TASK["id"], priority="high")
            assert rec["verdict"] == "accepted" and rec["reward"] == 1, rec
            with pytest.raises(CrucibleError) as ei:
                s.verify(task_id="no/such-task")
            assert ei.value.status == 404
    finally:
        assert srv.stop() == 0


def test_limits_usage_and_the_maximum(tmp_path):
    """The limits asked are the session's; usage shows a written file; beyond
    --max-sessions creating and forking are 429 (CrucibleOverloaded, code
    too_many_sessions), and a deleted session makes room again."""
    reason = no_serve_reason()
    if reason:
        pytest.skip(reason)
    from crucible_client import CrucibleOverloaded

    srv = Server("--slots", "1", "--max-sessions", "1")
    try:
        c = Client(srv.url, timeout=120, max_retries=0)
        s = c.session(limits={"memory_mb": 256, "pids": 32, "disk_mb": 16}, idle_ttl_s=120)
        assert (s.last_info["limits"]["memory_mb"], s.last_info["limits"]["pids"],
                s.last_info["limits"]["disk_mb"], s.last_info["idle_ttl_s"]) == (256, 32, 16, 120)
        s.write("blob.bin", b"\x01" * (2 << 20))
        usage = s.info()["usage"]
        assert usage["disk_kb"] >= 2048 and usage["disk_limit_kb"] == 16 * 1024, usage
        for make in (c.session, s.fork):
            with pytest.raises(CrucibleOverloaded) as ei:
                make()
            assert ei.value.status == 429 and ei.value.code == "too_many_sessions"
        listing = c.sessions()
        assert (listing["count"], listing["max"]) == (1, 1)
        s.close()
        with c.session() as again:
            assert again.id != s.id
    finally:
        assert srv.stop() == 0
