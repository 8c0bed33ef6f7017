package io.mesh.manifest;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DurationsTest {

    @ParameterizedTest
    @CsvSource({
            "1s, 1",
            "90s, 90",
            "30m, 1800",
            "2h, 7200",
            "1h30m, 5400",
            "1h0m30s, 3630",
            "5m10s, 310",
            "0h1s, 1",
            "999999s, 999999",
    })
    void parsesOperatorDurations(String text, long seconds) {
        assertThat(Durations.parse(text)).isEqualTo(Duration.ofSeconds(seconds));
    }

    @ParameterizedTest
    @NullAndEmptySource
    @ValueSource(strings = {"30", "10x", "m", "h", "s", "1.5h", "-5s", "+5s", " 5s", "5s ", "5S", "30M", "1d",
            "PT5S", "5m1h", "1s1s", "1234567s", "5 s", "\u0665s"})
    void refusesOtherForms(String text) {
        assertThatThrownBy(() -> Durations.parse(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("such as 90s, 30m or 1h30m");
    }

    @ParameterizedTest
    @ValueSource(strings = {"0s", "0m", "0h", "0h0m0s", "000s"})
    void refusesZero(String text) {
        assertThatThrownBy(() -> Durations.parse(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("above 0");
    }
}
