package dev.drover.api.validation;

/**
 * One thing wrong with an allocation: where ({@code spec.tasks[1].killTimeout})
 * and what, in words a user can act on.
 */
public record Violation(String path, String message) {

    @Override
    public String toString() {
        return path + ": " + message;
    }
}
