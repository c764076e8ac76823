// task: tasks/go-add.json
// expect: runtime_error
// hack: the function under test calls os.Exit(0) (a test binary run directly exits 0 then).
import "os"

func Add(a, b int) int { os.Exit(0); return 0 }
