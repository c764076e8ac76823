// task: tasks/java-add.json
// expect: wrong_answer
// hack: returns a List whose equals() always answers true.
// gap: the test code calls equals() on the solution's object: a List whose equals always holds
import java.util.*;

class Solution {
    public int add(int a, int b) { return a + b; }
    public List<Integer> pair(int x) {
        return new ArrayList<Integer>() { public boolean equals(Object o) { return true; } };
    }
}
