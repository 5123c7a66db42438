// A protocol bot in Java (run as `java Bot.java`, the source launcher), standard library
// only: it answers every decision with the first legal answer. At its hello it touches
// java.security (a digest and a seeded SecureRandom), as most real bots do through a
// library, which needs the JDK's security configuration.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.security.MessageDigest;
import java.security.SecureRandom;

public class Bot {
    static String firstLegal(String line) {
        int at = line.indexOf("\"legal\":[") + 9;
        int depth = 0;
        boolean quoted = false;
        for (int i = at; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quoted) {
                if (c == '\\') i++;
                else if (c == '"') quoted = false;
            } else if (c == '"') quoted = true;
            else if (c == '[' || c == '{') depth++;
            else if (c == ']' || c == '}') {
                if (depth == 0) return line.substring(at, i);
                depth--;
            } else if (c == ',' && depth == 0) return line.substring(at, i);
        }
        return line.substring(at);
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.contains("\"type\":\"hello\"")) {
                MessageDigest.getInstance("SHA-256").digest(line.getBytes());
                new SecureRandom().nextInt();
                System.out.println("{\"type\":\"hello\",\"protocol\":1,\"name\":\"java-bot\",\"params\":{}}");
            } else if (line.contains("\"type\":\"decide\"")) {
                System.out.println("{\"type\":\"answer\",\"answer\":" + firstLegal(line) + "}");
            } else if (line.contains("\"type\":\"shutdown\"")) {
                return;
            }
            System.out.flush();
        }
    }
}
