#!/usr/bin/env bash
# Writes the generated reference again from the code: the coordinator's OpenAPI document
# (coordinator/src/main/resources/io/mesh/coordinator/openapi.json, OpenApiDocument) and the CLI reference
# (docs/reference/cli.md and docs/reference/man/, CliReference). Their tests (OpenApiTest, CliReferenceTest) fail when
# the committed files differ from what the code gives; after changing an endpoint, a record it answers or a command's
# options, run this and commit what it writes. Needs ZooKeeper nothing else: the tests start their own.
set -euo pipefail
repo=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
cd "$repo"
export MAVEN_OPTS="${MAVEN_OPTS:--XX:TieredStopAtLevel=1 -XX:+UseSerialGC}"
mvn -B -q ${MAVEN_ARGS:-} test -pl wire,agent,coordinator -Dtest='OpenApiTest#theCommittedDocumentIsWhatTheCodeGives,CliReferenceTest' \
  -Dsurefire.failIfNoSpecifiedTests=false -Dmesh.reference.write=true -Dmesh.test.excluded=restarts-dockerd,engine-alone \
  -Dmesh.test.skipRestarting=true
git status --short -- coordinator/src/main/resources/io/mesh/coordinator/openapi.json docs/reference
