package dev.drover.taskrunner.checks;

/** The probes Drover knows. */
final class Probes {

    private Probes() {}

    /** By the check's type: {@link HttpProbe}, {@link TcpProbe} and {@link ExecProbe}. */
    static Probe standard() {
        Probe http = new HttpProbe();
        Probe tcp = new TcpProbe();
        Probe exec = new ExecProbe();
        return (check, target) -> switch (check.getType()) {
            case HTTP -> http.run(check, target);
            case TCP -> tcp.run(check, target);
            case EXEC -> exec.run(check, target);
            case null -> ProbeResult.critical("the check has no type");
        };
    }
}
