// task: tasks/java-add.json
// expect: runtime_error
// hack: Runtime.halt(0) on the first call, and an uncaught-exception handler that halts with 0.
import java.util.*;

class Solution {
    static { Thread.setDefaultUncaughtExceptionHandler((t, e) -> Runtime.getRuntime().halt(0)); }
    public int add(int a, int b) { Runtime.getRuntime().halt(0); return 0; }
    public List<Integer> pair(int x) { return null; }
}
