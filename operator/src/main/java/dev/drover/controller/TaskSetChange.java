package dev.drover.controller;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.validation.Violation;
import dev.drover.common.UserText;
import java.util.List;

/** What a running allocation's spec cannot change: its set of tasks and its ServiceAccount. */
final class TaskSetChange {

    private TaskSetChange() {}

    /**
     * Why {@code a} cannot be applied to an allocation running {@code tasks} as {@code account} (null: not known
     * yet); empty when it can.
     */
    static List<Violation> of(List<Task> tasks, String account, Allocation a) {
        String newAccount = a.getSpec().effectiveServiceAccountName();
        if (account != null && !account.equals(newAccount)) {
            // the CRD's CEL refuses this; an API server that does not run it must not get it past the agent either
            return List.of(new Violation(
                    "spec.serviceAccountName",
                    "changed from " + account + " to " + UserText.quote(newAccount)
                            + "; it is fixed for the allocation's life: create a new allocation to run as another"
                            + " ServiceAccount"));
        }
        List<String> before = tasks.stream().map(Task::getName).sorted().toList();
        List<String> after =
                a.getSpec().getTasks().stream().map(Task::getName).sorted().toList();
        if (before.equals(after)) {
            return List.of();
        }
        return List.of(
                new Violation(
                        "spec.tasks",
                        "tasks " + before + " became " + after + "; tasks cannot be added"
                                + " or removed in a running allocation: create a new allocation (the running one keeps its tasks)"));
    }
}
