"""Host-side probes of what a server's sandboxes leave on the machine, for the sessions'
end-to-end tests (94-sessions-*.t): processes by parentage and the cgroups they sit in.
They only read /proc and /sys/fs/cgroup.

    children_of(pid)       -> pids whose parent is pid (every thread's children)
    cgroups_of(pid)        -> the sb-* cgroup directories of pid below a crucible subtree
    wait_for(cond, s=20)   -> polls cond() until it holds or s seconds pass"""
import os
import time


def children_of(pid):
    kids = []
    for task in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/children" % (pid, task)) as f:
                kids += [int(p) for p in f.read().split()]
        except OSError:
            pass
    return kids


def cgroups_of(pid):
    """The sandbox's group (the path up to its sb-* component) in each hierarchy pid is in
    below a crucible subtree, as host paths; [] once pid is gone."""
    dirs = []
    try:
        with open("/proc/%d/cgroup" % pid) as f:
            lines = f.read().splitlines()
    except OSError:
        return dirs
    for line in lines:
        _, ctrls, path = line.split(":", 2)
        if "/crucible" not in path:
            continue
        parts = path.split("/")
        for ctrl in (ctrls.split(",") if ctrls else ["unified"]):
            base = "/sys/fs/cgroup/" + (ctrl.replace("name=", "") or "unified")
            for i, part in enumerate(parts):
                if part.startswith("sb-"):
                    dirs.append(base + "/".join(parts[:i + 1]))
                    break
    return dirs


def wait_for(cond, seconds=20):
    """Polls cond until it holds or seconds pass (a liveness bound, not a timing check)."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        if cond():
            return True
        time.sleep(0.05)
    return cond()
