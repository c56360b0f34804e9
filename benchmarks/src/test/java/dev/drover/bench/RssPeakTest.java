package dev.drover.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class RssPeakTest {

    @Test
    void vmRssIsReadInBytes() {
        assertThat(RssPeak.parse("Name:\tjava\nVmPeak:\t 9000 kB\nVmRSS:\t  123456 kB\nRssAnon:\t 1 kB\n"))
                .isEqualTo(123456L * 1024);
        assertThat(RssPeak.parse("Name:\tjava\n")).isZero();
    }

    @Test
    void thePeakOfALiveProcessIsItsResidentSetAndAGoneOneReadsAsNothing() throws Exception {
        long self = ProcessHandle.current().pid();
        try (RssPeak peak = new RssPeak(self)) {
            assertThat(peak.peakBytes()).isGreaterThan(1024L * 1024);
        }
        assertThat(RssPeak.rssBytes(Long.MAX_VALUE)).isZero();
    }
}
