# A hostile program for the demo: it tries several ways out of the sandbox and reports
# what happened to each. Every attempt should print "blocked".
import ctypes
import os
import socket

def attempt(name, fn):
    try:
        fn()
        print(f"{name:<36} ESCAPED")
    except Exception as e:  # the sandbox answers with an error: that is the point
        print(f"{name:<36} blocked ({type(e).__name__}: {e})")

def read_shadow():
    open("/etc/shadow").read()

def route_out():
    # A UDP connect only looks up a route; nothing is sent even if one existed.
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect(("192.0.2.1", 9))

def host_loopback():
    socket.create_connection(("127.0.0.1", 22), timeout=1)

def write_usr():
    open("/usr/bin/evil", "w").write("x")

def ptrace_attach():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.ptrace(16, 1, 0, 0) != 0:  # PTRACE_ATTACH to pid 1
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))

def new_user_namespace():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(0x10000000) != 0:  # CLONE_NEWUSER
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))

def host_home():
    os.listdir("/root")

attempt("read /etc/shadow", read_shadow)
attempt("find a route off the machine", route_out)
attempt("reach the host's 127.0.0.1:22", host_loopback)
attempt("write into /usr/bin", write_usr)
attempt("ptrace pid 1", ptrace_attach)
attempt("unshare(CLONE_NEWUSER)", new_user_namespace)
attempt("list /root", host_home)
print("uid", os.getuid(), "hostname", socket.gethostname(), "env keys", sorted(os.environ))
