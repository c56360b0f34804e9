package dev.drover.common;

/** How the kernel's mount table ({@code /proc/self/mountinfo}) writes a path. */
public final class MountTable {

    private MountTable() {}

    /** A path as the mount table writes it, decoded: space, tab, newline and backslash are octal escapes (\040). */
    public static String unescape(String s) {
        if (s.indexOf('\\') < 0) {
            return s;
        }
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && isOctal(s, i + 1)) {
                out.append((char) Integer.parseInt(s.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    private static boolean isOctal(String s, int from) {
        for (int i = from; i < from + 3; i++) {
            if (i >= s.length() || s.charAt(i) < '0' || s.charAt(i) > '7') {
                return false;
            }
        }
        return true;
    }
}
