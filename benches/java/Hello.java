/**
 * A trivial main for the `start-up` row: what each recorder adds to a JVM's start and exit
 * when the program itself does almost nothing (loading the agent, its tracker class and the
 * rewrites of the classes a JVM loads to say hello; JFR's own start-up).
 */
public class Hello {
    public static void main(String[] args) {
        System.out.println("hello");
    }
}
