/** Threads whose names contain the format's separators, line breaks and non-ASCII text. */
public class Names {
    static final String[] NAMES = {
        "comma,name", "line\nbreak\r\n", "semi;colon%percent", "\u00fcn\u00efc\u00f6d\u00e9 \u7dda\u7a0b \ud83d\ude00", "", "tab\there"
    };

    public static void main(String[] args) throws Exception {
        for (String n : NAMES) {
            Thread t = new Thread(() -> { }, n);
            t.start();
            t.join();
        }
        System.out.println("names done");
    }
}
