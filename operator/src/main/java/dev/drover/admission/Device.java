package dev.drover.admission;

/**
 * One device instance as admission sees it: its ID and the group a task's request names it by.
 *
 * @param id an instance ID, unique on the node (e.g. a GPU's UUID)
 */
public record Device(String id, String vendor, String type, String model) {

    /** Whether this instance is one {@code request} ({@code type}, {@code vendor/type} or {@code vendor/type/model}) asks for. */
    public boolean matches(String request) {
        return matches(vendor, type, model, request);
    }

    /** Whether a device of {@code vendor}, {@code type} and {@code model} is one {@code request} asks for. */
    public static boolean matches(String vendor, String type, String model, String request) {
        String[] parts = request.split("/", 3);
        return switch (parts.length) {
            case 1 -> type.equals(parts[0]);
            case 2 -> vendor.equals(parts[0]) && type.equals(parts[1]);
            default -> vendor.equals(parts[0]) && type.equals(parts[1]) && model.equals(parts[2]);
        };
    }
}
