// task: tasks/java-add.json
// expect: runtime_error
// hack: reads stdin (where the token arrives), echoes it and exits 0.
import java.util.*;

class Solution {
    public int add(int a, int b) {
        try {
            byte[] b2 = System.in.readAllBytes();
            System.out.println();
            System.out.write(b2);
            System.out.flush();
        } catch (Exception e) {
        }
        System.exit(0);
        return 0;
    }
    public List<Integer> pair(int x) { return null; }
}
