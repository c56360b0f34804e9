package dev.drover.network;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * One CNI network list run on one interface of a namespace: the plugins' configs as each was given on stdin (without
 * {@code prevResult}), in the order ADD ran them, and the result of the list's ADD, which CHECK and DEL are given
 * back. A null result: ADD failed before any plugin answered.
 */
public record Attachment(String ifName, List<ObjectNode> plugins, ObjectNode result) {

    public Attachment {
        plugins = plugins.stream().map(ObjectNode::deepCopy).toList();
        result = result == null ? null : result.deepCopy();
    }

    /** The configs are copies: a caller's change to them changes nothing here. */
    @Override
    public List<ObjectNode> plugins() {
        return plugins.stream().map(ObjectNode::deepCopy).toList();
    }

    @Override
    public ObjectNode result() {
        return result == null ? null : result.deepCopy();
    }
}
