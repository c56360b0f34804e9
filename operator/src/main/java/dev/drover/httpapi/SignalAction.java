package dev.drover.httpapi;

import dev.drover.common.UserText;
import dev.drover.driver.DriverException;
import dev.drover.driver.TaskNotRunningException;
import dev.drover.state.AllocId;

/**
 * {@code POST .../signal?task=TASK&signal=NAME}: sends a user's signal to one running task of an allocation this
 * agent runs. The task's {@code Signaling} event (and so the Kubernetes Event on the Allocation) names the user, as
 * the agent was told it: the caller itself, or the user the gateway asks for.
 */
final class SignalAction {

    /** The HTTP status of the answer and what it says. */
    record Answer(int status, String message) {}

    private SignalAction() {}

    static Answer send(AllocId id, LocalAllocation local, ApiRequest.Signal request, String user) {
        String task = request.task();
        String signal = request.signal();
        if (!local.tasks().contains(task)) {
            return new Answer(
                    404,
                    "allocation " + id + " has no task " + UserText.quote(task) + " (its tasks: "
                            + UserText.join(local.tasks(), ", ") + ")");
        }
        try {
            local.signal(task, signal, "Signal " + signal + " sent by " + UserText.quote(user));
        } catch (TaskNotRunningException e) {
            return new Answer(
                    409,
                    "task " + task + " of allocation " + id + " is not running (" + local.state(task) + "): " + signal
                            + " was not sent");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Answer(503, "the agent is shutting down; " + signal + " may not have been sent");
        } catch (DriverException e) {
            return new Answer(
                    500,
                    "sending " + signal + " to task " + task + " of allocation " + id + " failed: " + e.getMessage());
        }
        return new Answer(200, "sent " + signal + " to task " + task + " of allocation " + id);
    }
}
