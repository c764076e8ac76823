// task: tasks/go-add.json
// expect: runtime_error
// hack: an init function calls os.Exit(0) before any test runs.
import "os"

func init() { os.Exit(0) }

func Add(a, b int) int { return 0 }
