package dev.drover.state;

/**
 * What the alloc runner made of its allocation, kept so a restarted agent
 * resumes from it. Null fields were never set (distinct from empty or zero).
 *
 * @param clientStatus       {@code Pending}, {@code Running}, {@code Complete}, {@code Failed} or {@code Lost}
 * @param clientDescription  the human sentence that goes with it
 * @param observedGeneration the {@code metadata.generation} the runner last acted on
 * @param restartedAt        the {@code drover.dev/restartedAt} annotation's value last acted on ({@code ""}: none);
 *                           null in a store written before the agent kept it
 */
public record AllocRunnerState(
        String clientStatus, String clientDescription, Long observedGeneration, String restartedAt) {

    public AllocRunnerState(String clientStatus, String clientDescription, Long observedGeneration) {
        this(clientStatus, clientDescription, observedGeneration, null);
    }
}
