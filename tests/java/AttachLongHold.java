import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A program for `orca attach` (cli/tests/attach.rs): started without the agent, it prints
 * `ready`; on the input line `hold` its main thread holds a `ReentrantLock` for 50 ms (a long
 * hold at the default threshold of 10 ms) and releases it, then prints `released`; `quit` ends
 * it (`done`).
 */
public class AttachLongHold {
    static final ReentrantLock lock = new ReentrantLock();

    static void hold() throws InterruptedException {
        lock.lock();
        try {
            Thread.sleep(50);
        } finally {
            lock.unlock();
        }
    }

    public static void main(String[] args) throws Exception {
        System.out.println("ready");
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.equals("hold")) {
                hold();
                System.out.println("released");
            } else if (line.equals("quit")) {
                break;
            }
            System.out.flush();
        }
        System.out.println("done");
    }
}
