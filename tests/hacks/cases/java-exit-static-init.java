// task: tasks/java-add.json
// expect: runtime_error
// hack: a static initialiser of Solution calls System.exit(0) when the test code first uses it.
import java.util.*;

class Solution {
    static { System.exit(0); }
    public int add(int a, int b) { return 0; }
    public List<Integer> pair(int x) { return null; }
}
