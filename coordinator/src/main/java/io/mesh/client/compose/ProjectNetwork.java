package io.mesh.client.compose;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * One network of the compose project that services may join: what {@link ComposeNetworks#declare} reads and
 * {@link ImportContext#networks} keeps. Its own record, apart from both, so that the import's context does not point
 * back at the class that fills it.
 *
 * @param settings the module network's fields ({@code internal}, {@code labels}, {@code external}, {@code name})
 * @param external mesh neither creates nor removes it
 * @param docker   its Docker name as compose named it: {@code name}, else the key when external, else {@code <project>_<key>}
 * @param declared written under the compose file's top-level networks (else compose's implicit {@code default})
 */
record ProjectNetwork(ObjectNode settings, boolean external, String docker, boolean declared) {}
