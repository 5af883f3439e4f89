/** The smallest program: used for option errors (it must not run) and start-up lines. */
public class Hello {
    public static void main(String[] args) {
        System.out.println("hello");
    }
}
