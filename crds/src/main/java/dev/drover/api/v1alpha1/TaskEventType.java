package dev.drover.api.v1alpha1;

/** Every kind of task event; docs/semantics.md (Task events) says when each is emitted and what it carries. */
public enum TaskEventType {
    Received,
    TaskSetup,
    Started,
    Terminated,
    Restarting,
    NotRestarting,
    Killing,
    Killed,
    DriverFailure,
    SetupFailure,
    FailedValidation,
    SiblingTaskFailed,
    LeaderTaskDead,
    MainTasksDead,
    RestartSignaled,
    WaitingShutdownDelay,
    FailedRestoringTask,
    Signaling,
    CredentialRefreshFailed,
    Exec,
    CheckStatusChanged,
    Downloading,
    Downloaded,
    PullFailed
}
