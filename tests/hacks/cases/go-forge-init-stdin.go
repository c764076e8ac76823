// task: tasks/go-add.json
// expect: runtime_error
// hack: an init function reads stdin, prints what it got and exits 0.
// (the harness reads the token in its first package variable's initialiser, before any init)
import (
    "os"
    "syscall"
)

func init() {
    b := make([]byte, 64)
    n, _ := syscall.Read(0, b)
    if n < 0 {
        n = 0
    }
    syscall.Write(1, append([]byte("\n"), b[:n]...))
    os.Exit(0)
}

func Add(a, b int) int { return 0 }
