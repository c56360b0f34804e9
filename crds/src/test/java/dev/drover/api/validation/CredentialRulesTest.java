package dev.drover.api.validation;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.v1alpha1.Allocation;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.List;
import org.junit.jupiter.api.Test;

class CredentialRulesTest {

    private static List<Violation> validate(String specYaml) {
        String yaml = "apiVersion: drover.dev/v1alpha1\nkind: Allocation\nmetadata: {name: me}\nspec:\n  nodeName: n\n"
                + specYaml.indent(2);
        return AllocationValidator.validate(Serialization.unmarshal(yaml, Allocation.class));
    }

    @Test
    void secretsConfigMapsAndTokensAsAUserWritesThemAreValid() {
        assertThat(validate("""
                serviceAccountName: trainer
                automountServiceAccountToken: true
                tasks:
                - name: web
                  driver: mock
                  env:
                  - {name: DB_PASSWORD, valueFrom: {secretKeyRef: {name: db, key: password}}}
                  - {name: MODE, valueFrom: {configMapKeyRef: {name: app.config, key: mode_1, optional: true}}}
                  serviceAccountToken: {audience: vault, expirationSeconds: 7200}
                  files:
                  - {secret: db}
                  - {secret: token, path: api-token, mode: 256}
                  - configMap: app.config
                    path: conf-app
                    items: [{key: app.yaml, path: etc/app.yaml, mode: 0644}, {key: .hidden, path: .hidden}]
                  onChange: Signal
                  changeSignal: SIGHUP
                """)).isEmpty();
    }

    @Test
    void aValueComesFromExactlyOnePlace() {
        assertThat(validate("""
                tasks:
                - name: web
                  driver: mock
                  env:
                  - {name: A, value: x, valueFrom: {secretKeyRef: {name: s, key: k}}}
                  - {name: B, valueFrom: {}}
                  - {name: C, valueFrom: {secretKeyRef: {name: s, key: k}, configMapKeyRef: {name: c, key: k}}}
                """))
                .containsExactly(
                        new Violation("spec.tasks[0].env[0]", "gives value and valueFrom; give one"),
                        new Violation(
                                "spec.tasks[0].env[1].valueFrom",
                                "needs exactly one of secretKeyRef and configMapKeyRef"),
                        new Violation(
                                "spec.tasks[0].env[2].valueFrom",
                                "needs exactly one of secretKeyRef and configMapKeyRef"));
    }

    @Test
    void keysAndNamesCannotNameAPath() {
        assertThat(validate("""
                serviceAccountName: ../admin
                tasks:
                - name: web
                  driver: mock
                  env: [{name: A, valueFrom: {secretKeyRef: {name: Db, key: ../../etc/shadow}}}]
                """))
                .extracting(Violation::path)
                .containsExactly(
                        "spec.serviceAccountName",
                        "spec.tasks[0].env[0].valueFrom.secretKeyRef.name",
                        "spec.tasks[0].env[0].valueFrom.secretKeyRef.key");
    }

    @Test
    void filePathsStayInsideTheTaskDirectoryAndClearOfTheToken() {
        assertThat(validate("""
                tasks:
                - name: web
                  driver: mock
                  files:
                  - {secret: a, path: ../../other-task}
                  - {secret: b, path: /etc}
                  - {secret: token}
                  - {secret: c, items: [{key: k, path: x/../../y}, {key: k, path: ..data}, {key: k, path: ./x}]}
                  - {configMap: d, path: "a//b"}
                """))
                .extracting(Violation::path)
                .containsExactly(
                        "spec.tasks[0].files[0].path",
                        "spec.tasks[0].files[1].path",
                        "spec.tasks[0].files[2].path",
                        "spec.tasks[0].files[3].items[0].path",
                        "spec.tasks[0].files[3].items[1].path",
                        "spec.tasks[0].files[3].items[2].path",
                        "spec.tasks[0].files[4].path");
    }

    @Test
    void projectionsAndItemsMayNotOverlap() {
        assertThat(validate("""
                tasks:
                - name: web
                  driver: mock
                  files:
                  - {secret: a, path: db}
                  - {secret: b, path: db}
                  - {configMap: c, path: db}
                  - {secret: d, path: db/extra}
                  - {secret: e, items: [{key: k, path: conf}, {key: l, path: conf/x}]}
                """))
                .containsExactly(
                        new Violation(
                                "spec.tasks[0].files[1].path",
                                "\"secrets/db\" overlaps \"secrets/db\"; give each entry its own path"),
                        new Violation(
                                "spec.tasks[0].files[3].path",
                                "\"db/extra\" is not a directory name (one plain name: no '/', not '.' or starting"
                                        + " with '..', at most 253 characters)"),
                        new Violation(
                                "spec.tasks[0].files[4].items[1].path",
                                "\"conf/x\" overlaps \"conf\"; each key needs its own file"));
    }

    @Test
    void aFilesEntryNamesOneObjectAndModesAreModeBits() {
        assertThat(validate("""
                tasks:
                - name: web
                  driver: mock
                  files:
                  - {secret: a, configMap: b}
                  - {}
                  - {secret: c, mode: 512}
                """))
                .extracting(Violation::path)
                .containsExactly("spec.tasks[0].files[0]", "spec.tasks[0].files[1]", "spec.tasks[0].files[2].mode");
    }

    @Test
    void aTaskTokenIsNeverForTheAgentsAudienceAndLivesTenMinutesToADay() {
        assertThat(validate("""
                tasks:
                - {name: a, driver: mock, serviceAccountToken: {audience: drover.dev/agent}}
                - {name: b, driver: mock, serviceAccountToken: {expirationSeconds: 599}}
                - {name: c, driver: mock, serviceAccountToken: {expirationSeconds: 86401}}
                """))
                .extracting(Violation::path)
                .containsExactly(
                        "spec.tasks[0].serviceAccountToken.audience",
                        "spec.tasks[1].serviceAccountToken.expirationSeconds",
                        "spec.tasks[2].serviceAccountToken.expirationSeconds");
    }

    @Test
    void aChangeSignalGoesWithOnChangeSignalOnly() {
        assertThat(validate("""
                tasks:
                - {name: a, driver: mock, onChange: Signal}
                - {name: b, driver: mock, onChange: Restart, changeSignal: SIGHUP}
                - {name: c, driver: mock, onChange: Signal, changeSignal: SIGNOPE}
                """))
                .extracting(Violation::path)
                .containsExactly(
                        "spec.tasks[0].changeSignal", "spec.tasks[1].changeSignal", "spec.tasks[2].changeSignal");
    }

    @Test
    void imagePullSecretsNameSecretsOnceEachAndAtMostSixteen() {
        assertThat(validate("""
                imagePullSecrets: [{name: registry-a}, {name: registry.b}]
                tasks: [{name: web, driver: oci, config: {image: r.io/app:1}}]
                """)).isEmpty();
        assertThat(validate("""
                imagePullSecrets: [{name: Registry_A}, {}, {name: ok}, {name: ok}]
                tasks: [{name: web, driver: oci, config: {image: r.io/app:1}}]
                """))
                .containsExactly(
                        new Violation(
                                "spec.imagePullSecrets[0].name",
                                "\"Registry_A\" is not a Secret name (lower-case letters, digits, '-' and '.', at"
                                        + " most 253 characters)"),
                        new Violation(
                                "spec.imagePullSecrets[1].name",
                                "is required: the name of a Secret of the allocation's namespace"),
                        new Violation("spec.imagePullSecrets[3].name", "\"ok\" is named twice; name each Secret once"));
        StringBuilder many = new StringBuilder("imagePullSecrets:\n");
        for (int i = 0; i < 17; i++) {
            many.append("- {name: s").append(i).append("}\n");
        }
        many.append("tasks: [{name: web, driver: mock}]\n");
        assertThat(validate(many.toString()))
                .containsExactly(new Violation("spec.imagePullSecrets", "has 17 entries; at most 16 are allowed"));
    }
}
