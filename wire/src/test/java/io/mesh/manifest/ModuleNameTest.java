package io.mesh.manifest;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/** The one name rule (docs/security.md, threat 2). */
class ModuleNameTest {
    @ParameterizedTest
    @ValueSource(strings = {"store", "0", "a-b", "garbage-collect", "a234567890123456789012345678901234567890"})
    void namesThatFollowTheRule(String name) {
        assertThat(ModuleName.matches(name)).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "-a", "Store", "a_b", "a.b", "../etc", "a/b", "a\nb", "a2345678901234567890123456789012345678901"})
    void namesThatDoNot(String name) {
        assertThat(ModuleName.matches(name)).isFalse();
    }

    @Test
    void nullIsNoName() {
        assertThat(ModuleName.matches(null)).isFalse();
    }
}
