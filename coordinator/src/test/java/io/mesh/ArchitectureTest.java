package io.mesh;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import com.tngtech.archunit.library.Architectures;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.common.PathUtils;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The layers of docs/architecture.md, checked on the main classes of all three Maven modules (the coordinator's
 * tests have the wire and the agent on their classpath). A dependency that breaks a layer fails the build.
 */
class ArchitectureTest {
    private static JavaClasses mesh;

    @BeforeAll
    static void importMainClasses() {
        mesh = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                // the agent's test-jar (fixtures the coordinator's tests reuse) is test code too
                .withImportOption(location -> !location.contains("-tests.jar"))
                .importPackages("io.mesh");
        // A rule over nothing passes: make sure every layer was found.
        for (String p : new String[] {"manifest", "wire", "curator", "cli", "zk", "docker", "policy", "gate", "section", "window",
                "apply", "agent", "rollout", "freeze", "hold", "secrets", "ledger", "hooks", "coordinator", "client"}) {
            assertThat(mesh.stream().anyMatch(c -> c.getPackageName().equals("io.mesh." + p))).as("classes of io.mesh." + p).isTrue();
        }
    }

    /** Bottom to top; each layer names who may use it. */
    @Test
    void layers() {
        ArchRule rule = Architectures.layeredArchitecture().consideringOnlyDependenciesInLayers()
                .layer("manifest").definedBy("io.mesh.manifest..")
                .layer("wire").definedBy("io.mesh.wire..")
                .layer("curator").definedBy("io.mesh.curator..")
                .layer("cli").definedBy("io.mesh.cli..")
                .layer("zookeeper").definedBy("io.mesh.zk..")
                .layer("docker").definedBy("io.mesh.docker..")
                .layer("policy").definedBy("io.mesh.policy..")
                .layer("gate").definedBy("io.mesh.gate..")
                .layer("section").definedBy("io.mesh.section..")
                .layer("rollout").definedBy("io.mesh.rollout..")
                .layer("freeze").definedBy("io.mesh.freeze..")
                .layer("hold").definedBy("io.mesh.hold..")
                .layer("secrets").definedBy("io.mesh.secrets..")
                .layer("ledger").definedBy("io.mesh.ledger..")
                .layer("hooks").definedBy("io.mesh.hooks..")
                .layer("window").definedBy("io.mesh.window..")
                .layer("apply").definedBy("io.mesh.apply..")
                .layer("agent").definedBy("io.mesh.agent..")
                .layer("coordinator").definedBy("io.mesh.coordinator..")
                .layer("client").definedBy("io.mesh.client..")
                .whereLayer("manifest").mayNotAccessAnyLayer()
                .whereLayer("wire").mayOnlyAccessLayers("manifest")
                .whereLayer("curator").mayOnlyAccessLayers("wire", "manifest")
                .whereLayer("cli").mayOnlyAccessLayers("curator", "wire", "manifest")
                .whereLayer("cli").mayOnlyBeAccessedByLayers("agent", "coordinator")
                .whereLayer("agent").mayNotBeAccessedByAnyLayer()
                .whereLayer("apply").mayOnlyBeAccessedByLayers("agent")
                .whereLayer("window").mayOnlyBeAccessedByLayers("apply", "agent")
                .whereLayer("section").mayOnlyBeAccessedByLayers("hold", "window", "apply", "agent")
                .whereLayer("rollout").mayOnlyBeAccessedByLayers("apply", "agent")
                .whereLayer("freeze").mayOnlyBeAccessedByLayers("apply", "agent")
                .whereLayer("hold").mayOnlyBeAccessedByLayers("window", "apply", "agent")
                .whereLayer("secrets").mayOnlyBeAccessedByLayers("hooks", "window", "apply", "agent")
                .whereLayer("hooks").mayOnlyBeAccessedByLayers("hold", "window", "apply", "agent")
                .whereLayer("ledger").mayOnlyBeAccessedByLayers("section", "freeze", "hold", "window", "apply", "agent")
                .whereLayer("policy").mayOnlyBeAccessedByLayers("window", "apply", "agent")
                .whereLayer("gate").mayOnlyAccessLayers("wire", "manifest")
                .whereLayer("gate").mayOnlyBeAccessedByLayers("window", "rollout", "agent")
                .whereLayer("docker").mayOnlyBeAccessedByLayers("section", "hold", "secrets", "ledger", "hooks", "window", "apply", "agent")
                .whereLayer("zookeeper").mayOnlyBeAccessedByLayers("section", "rollout", "freeze", "hold", "hooks", "window", "apply", "agent")
                .whereLayer("coordinator").mayOnlyBeAccessedByLayers("client")
                .whereLayer("client").mayNotBeAccessedByAnyLayer();
        rule.check(mesh);
    }

    @Test
    void noPackageCycles() {
        slices().matching("io.mesh.(*)..").should().beFreeOfCycles().check(mesh);
    }

    /** The coordinator and the client carry only the wire (decision 9): no agent runtime, no Docker client. */
    @Test
    void theCoordinatorAndTheClientNeedOnlyTheWire() {
        noClasses().that().resideInAnyPackage("io.mesh.coordinator..", "io.mesh.client..")
                .should().dependOnClassesThat().resideInAnyPackage("io.mesh.zk..", "io.mesh.docker..",
                        "io.mesh.policy..", "io.mesh.gate..", "io.mesh.section..", "io.mesh.window..", "io.mesh.rollout..", "io.mesh.freeze..", "io.mesh.apply..", "io.mesh.agent..",
                        "com.github.dockerjava..", "com.cronutils..")
                .check(mesh);
    }

    /**
     * The wire module (manifest, wire, curator, cli) knows nothing of Docker or the agent's runtime. It may use picocli:
     * the options that the agent's and the coordinator's commands share are one mixin there ({@code ProcessOptions}),
     * the one module both depend on.
     */
    @Test
    void theWireHasNoDockerAndNoAgent() {
        String[] wireModule = {"io.mesh.manifest..", "io.mesh.wire..", "io.mesh.curator..", "io.mesh.cli.."};
        noClasses().that().resideInAnyPackage(wireModule)
                .should().dependOnClassesThat().resideInAnyPackage("com.github.dockerjava..", "org.apache.hc..",
                        "org.eclipse.jetty..")
                .check(mesh);
        noClasses().that().resideInAnyPackage(wireModule)
                .should().dependOnClassesThat().resideOutsideOfPackages("io.mesh.manifest..", "io.mesh.wire..",
                        "io.mesh.curator..", "io.mesh.cli..", "java..", "javax..",
                        "com.fasterxml.jackson..", "org.apache.curator..", "org.apache.zookeeper..", "org.slf4j..",
                        "ch.qos.logback..", "com.cronutils..", "org.yaml.snakeyaml..", "picocli..")
                .check(mesh);
    }

    /**
     * The node records and the layout need no ZooKeeper client: no Curator or ZooKeeper class, no curator or cli
     * package. {@code ZkPaths} joins and checks path strings with Curator's {@code ZKPaths} and ZooKeeper's
     * {@code PathUtils}, string helpers that hold no client.
     */
    @Test
    void theRecordsUseNoCurator() {
        DescribedPredicate<JavaClass> zooKeeperClient = JavaClass.Predicates.resideInAnyPackage("io.mesh.curator..",
                        "io.mesh.cli..", "org.apache.curator..", "org.apache.zookeeper..", "picocli..", "ch.qos.logback..")
                .and(DescribedPredicate.not(JavaClass.Predicates.belongToAnyOf(ZKPaths.class, PathUtils.class)));
        noClasses().that().resideInAPackage("io.mesh.wire..")
                .should().dependOnClassesThat(zooKeeperClient)
                .check(mesh);
    }

    /**
     * The Curator infrastructure builds on the records and the manifest and on nothing above them: no command line, no
     * agent or coordinator package.
     */
    @Test
    void theCuratorPackageIsInfrastructure() {
        noClasses().that().resideInAPackage("io.mesh.curator..")
                .should().dependOnClassesThat().resideOutsideOfPackages("io.mesh.curator..", "io.mesh.wire..",
                        "io.mesh.manifest..", "java..", "javax..", "com.fasterxml.jackson..", "org.apache.curator..",
                        "org.apache.zookeeper..", "org.slf4j..")
                .check(mesh);
    }

    /** The command-line helpers are for the processes' commands only: the agent's and the coordinator's mains use them. */
    @Test
    void theCommandLineHelpersServeOnlyTheMains() {
        noClasses().that().resideInAPackage("io.mesh.cli..")
                .should().dependOnClassesThat().resideOutsideOfPackages("io.mesh.cli..", "io.mesh.curator..",
                        "io.mesh.wire..", "io.mesh.manifest..", "java..", "picocli..", "org.slf4j..", "ch.qos.logback..")
                .check(mesh);
        noClasses().that().resideInAPackage("io.mesh..")
                .and().resideOutsideOfPackages("io.mesh.cli..", "io.mesh.agent..", "io.mesh.coordinator..")
                .should().dependOnClassesThat().resideInAPackage("io.mesh.cli..")
                .check(mesh);
    }

    /**
     * The manifest is the bottom of the wire module: the node records carry a {@code ModuleSpec}, so it uses no other
     * mesh package, and it parses and checks without Curator or ZooKeeper (what a push is, not where it is kept).
     */
    @Test
    void theManifestStandsAlone() {
        noClasses().that().resideInAPackage("io.mesh.manifest..")
                .should().dependOnClassesThat().resideOutsideOfPackages("io.mesh.manifest..", "java..",
                        "com.fasterxml.jackson..", "com.cronutils..", "org.yaml.snakeyaml..")
                .check(mesh);
    }

    /** Only the docker package talks to docker-java. */
    @Test
    void onlyTheDockerPackageUsesDockerJava() {
        noClasses().that().resideOutsideOfPackage("io.mesh.docker..").and().resideInAPackage("io.mesh..")
                .should().dependOnClassesThat().resideInAPackage("com.github.dockerjava..")
                .check(mesh);
    }

    /**
     * No cycle between classes either, inside a package or across (docs/architecture.md): each class's arrows go one
     * way, so a class can be read, and changed, knowing only what is below it. A nested class counts as its top-level
     * class.
     */
    @Test
    void noClassCycles() {
        slices().assignedFrom(new SliceAssignment() {
            @Override
            public SliceIdentifier getIdentifierOf(JavaClass c) {
                String name = c.getName();
                if (!name.startsWith("io.mesh.")) return SliceIdentifier.ignore();
                int nested = name.indexOf('$');
                return SliceIdentifier.of(nested < 0 ? name : name.substring(0, nested));
            }

            @Override
            public String getDescription() { return "top-level classes of io.mesh"; }
        }).should().beFreeOfCycles().check(mesh);
    }
}
