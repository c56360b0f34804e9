package dev.drover.cli;

import static dev.drover.cli.TerminalText.clean;

import dev.drover.api.v1alpha1.TaskEvent;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/** A task event in one line, as {@code kubectl drover status} shows it (and {@code -o json} as its description). */
final class TaskEventText {

    private TaskEventText() {}

    /**
     * The event's message, then each detail its type carries that the message
     * does not already say: {@code Exit Code: 137, Signal: SIGKILL}.
     */
    static String describe(TaskEvent e) {
        String message = e.getMessage() == null ? "" : e.getMessage();
        Map<String, String> details = new LinkedHashMap<>();
        details.put(
                "Exit Code", e.getExitCode() == null ? null : e.getExitCode().toString());
        details.put("Signal", e.getSignal());
        details.put("Restart Reason", e.getRestartReason());
        details.put("Restart Delay", e.getStartDelay());
        details.put("Kill Timeout", e.getKillTimeout());
        details.put("Kill Error", e.getKillError());
        details.put("Failed Sibling", e.getFailedSibling());
        details.put("Validation Error", e.getValidationError());
        details.put("Driver Error", e.getDriverError());
        List<String> parts = new ArrayList<>();
        if (!message.isEmpty()) {
            parts.add(message);
        }
        details.forEach((label, value) -> {
            if (value != null && !value.isEmpty() && !says(message, label, value)) {
                parts.add(label + ": " + value);
            }
        });
        return clean(String.join(", ", parts));
    }

    /** Whether {@code message} already tells {@code value}; a bare number is in many by chance, so only labelled. */
    private static boolean says(String message, String label, String value) {
        boolean number = value.chars().allMatch(Character::isDigit);
        // "Exit Code: 12" does not say "Exit Code: 1"
        boolean labelled = Pattern.compile(Pattern.quote(label + ": " + value) + "(?!\\d)")
                .matcher(message)
                .find();
        return labelled || (!number && message.contains(value));
    }
}
