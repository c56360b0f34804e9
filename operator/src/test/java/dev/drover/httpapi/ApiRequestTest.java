package dev.drover.httpapi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.state.AllocId;
import org.junit.jupiter.api.Test;

class ApiRequestTest {

    @Test
    void aLogsTargetNamesTheTaskStreamAndLines() throws Exception {
        ApiRequest r = ApiRequest.parse("/v1/allocations/default/web/logs/server", "stream=stderr&tail=20&follow=true");

        assertThat(r.id()).isEqualTo(new AllocId("default", "web"));
        assertThat(r.subresource()).isEqualTo("log");
        assertThat(r.logs()).isEqualTo(new ApiRequest.Logs("server", "stderr", 20, true));
    }

    @Test
    void aSignalTargetIsAPostForCreateNamingTaskAndCanonicalSignal() throws Exception {
        ApiRequest r = ApiRequest.parse("/v1/allocations/default/web/signal", "task=server&signal=hup");

        assertThat(r.subresource()).isEqualTo("signal");
        assertThat(r.signal()).isEqualTo(new ApiRequest.Signal("server", "SIGHUP"));
        assertThat(r.method()).isEqualTo("POST");
        assertThat(r.verb()).isEqualTo("create");
        assertThat(ApiRequest.parse("/v1/allocations/default/web/stats", null).verb())
                .isEqualTo("get");
        assertThatThrownBy(() -> ApiRequest.parse("/v1/allocations/default/web/signal", "task=server&signal=NOPE"))
                .hasMessageContaining("unknown signal \"NOPE\"");
        assertThatThrownBy(() -> ApiRequest.parse("/v1/allocations/default/web/signal", "task=a/b&signal=HUP"))
                .hasMessageContaining("is not a valid task name");
        assertThatThrownBy(() -> ApiRequest.parse("/v1/allocations/default/web/signal", "task=server"))
                .hasMessageContaining("signal=NAME");
    }

    @Test
    void logsDefaultToAllOfStdoutWithoutFollowing() throws Exception {
        ApiRequest r = ApiRequest.parse("/v1/allocations/default/web/logs/server", null);

        assertThat(r.logs()).isEqualTo(new ApiRequest.Logs("server", "stdout", -1, false));
    }

    @Test
    void statsAndSnapshotTargetsCarryNoLogs() throws Exception {
        assertThat(ApiRequest.parse("/v1/allocations/default/web/stats", "tail=x")
                        .subresource())
                .isEqualTo("stats");
        ApiRequest snapshot = ApiRequest.parse("/v1/allocations/default/web/snapshot", null);
        assertThat(snapshot.subresource()).isEqualTo("snapshot");
        assertThat(snapshot.logs()).isNull();
    }

    @Test
    void onlyTheFourRoutesAreServed() {
        assertThat(ApiRequest.served("/v1/allocations/default/web/stats")).isTrue();
        assertThat(ApiRequest.served("/v1/allocations/default/web/logs/a/b")).isFalse();
        assertThat(ApiRequest.served("/v1/allocations/default/web")).isFalse();
        assertThat(ApiRequest.served("/v1/allocations/default/web/exec")).isTrue();
        assertThat(ApiRequest.served("/v1/allocations/default/web/exec/x")).isFalse();
    }

    @Test
    void escapedSlashesAndDotsInNamesAreRefused() {
        assertThatThrownBy(() -> ApiRequest.parse("/v1/allocations/default/..%2F..%2Fetc/stats", null))
                .isInstanceOf(ApiRequest.BadRequest.class)
                .hasMessageContaining("is not a valid allocation name");
        assertThatThrownBy(() -> ApiRequest.parse("/v1/allocations/%2e%2e/web/stats", null))
                .isInstanceOf(ApiRequest.BadRequest.class);
        assertThatThrownBy(() -> ApiRequest.parse("/v1/allocations/default/web/logs/..%2fx", null))
                .isInstanceOf(ApiRequest.BadRequest.class)
                .hasMessageContaining("is not a valid task name");
    }

    @Test
    void malformedEscapesAndBytesThatAreNotUtf8AreRefused() {
        assertThatThrownBy(() -> ApiRequest.parse("/v1/allocations/default/web%2/stats", null))
                .isInstanceOf(ApiRequest.BadRequest.class)
                .hasMessageContaining("malformed % escape");
        assertThatThrownBy(() -> ApiRequest.parse("/v1/allocations/default/web%ff/stats", null))
                .isInstanceOf(ApiRequest.BadRequest.class)
                .hasMessageContaining("does not decode to UTF-8 text");
    }

    @Test
    void aQueryOutsideTheLogGrammarIsRefused() {
        assertThatThrownBy(() -> ApiRequest.parse("/v1/allocations/default/web/logs/server", "stream=stdin"))
                .isInstanceOf(ApiRequest.BadRequest.class)
                .hasMessageContaining("stream must be stdout or stderr");
        assertThatThrownBy(() -> ApiRequest.parse("/v1/allocations/default/web/logs/server", "tail=9999999999"))
                .isInstanceOf(ApiRequest.BadRequest.class)
                .hasMessageContaining("tail must be a whole number");
        assertThatThrownBy(() -> ApiRequest.parse("/v1/allocations/default/web/logs/server", "tail=%zz"))
                .isInstanceOf(ApiRequest.BadRequest.class);
    }
}
