// task: tasks/go-add.json
// expect: runtime_error
// hack: a package variable's initialiser reads stdin, prints it and exits 0; and an init
// function asks the harness's closure for the token's shares.
// (variables initialise in declaration order, the harness's file first; the closure answers
// only the package's TestMain)
import (
    "os"
    "syscall"
)

var stolen = steal()

func steal() int {
    b := make([]byte, 64)
    n, _ := syscall.Read(0, b)
    if n > 0 {
        syscall.Write(1, append([]byte("\n"), b[:n]...))
        os.Exit(0)
    }
    return 0
}

func init() {
    if a, b, ok := crucibleHeld(); ok {
        line := []byte("\n")
        for i := 0; i < 16; i++ {
            v := a[i] ^ b[i]
            line = append(line, "0123456789abcdef"[v>>4], "0123456789abcdef"[v&15])
        }
        syscall.Write(1, append(line, '\n'))
        os.Exit(0)
    }
}

func Add(a, b int) int { return 0 }
