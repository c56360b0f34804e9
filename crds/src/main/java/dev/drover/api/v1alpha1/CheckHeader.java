package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.Objects;
import java.util.Set;

/** One header an http check sends, as a Kubernetes probe's {@code httpGet.httpHeaders} entry. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
        value = "!(self.name.lowerAscii() in ['connection', 'content-length', 'transfer-encoding', 'te', 'trailer',"
                + " 'upgrade', 'expect', 'keep-alive'])",
        message = "the probe sets Connection, Content-Length, Transfer-Encoding, TE, Trailer, Upgrade, Expect and"
                + " Keep-Alive itself; remove the header")
public class CheckHeader {

    /**
     * Headers that frame the probe's exchange, which the probe sets itself (in lower case): a check's own would break
     * the request, so the CRD and the validator refuse them. The CEL rule above lists the same.
     */
    public static final Set<String> RESERVED = Set.of(
            "connection", "content-length", "transfer-encoding", "te", "trailer", "upgrade", "expect", "keep-alive");

    /** An HTTP field name: a token of RFC 9110. */
    public static final String NAME_PATTERN = "^[-!#$%&'*+.^_`|~0-9A-Za-z]+$";

    /** A field value: no control character but tab, so a value cannot end the header and start another. */
    public static final String VALUE_PATTERN = "^[^\\x00-\\x08\\x0a-\\x1f\\x7f]*$";

    public static final int MAX_NAME = 256;
    public static final int MAX_VALUE = 4096;

    @Required
    @Size(min = 1, max = MAX_NAME)
    @Pattern(NAME_PATTERN)
    @JsonPropertyDescription(
            "The header's name, an HTTP token; headers that frame the exchange (Connection, Content-Length, ...) are refused.")
    private String name;

    @Size(max = MAX_VALUE)
    @Pattern(VALUE_PATTERN)
    @JsonPropertyDescription("The header's value, with no control character but tab; empty when not given.")
    private String value;

    public CheckHeader() {}

    public CheckHeader(String name, String value) {
        this.name = name;
        this.value = value;
    }

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    /** The value; empty when not given. */
    public String getValue() {
        return value;
    }

    public void setValue(String value) {
        this.value = value;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CheckHeader h && Objects.equals(name, h.name) && Objects.equals(value, h.value);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, value);
    }
}
