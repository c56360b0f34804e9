package dev.drover.image;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPOutputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;
import org.apache.commons.compress.compressors.zstandard.ZstdCompressorOutputStream;

/**
 * An image built by a test, as a registry stores it: layers (tar, gzip or zstd), a config, a manifest (OCI or
 * Docker schema 2), or an index of such images by platform.
 */
public final class TestImage {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** Bytes as pushed, with their digest. */
    public record Blob(String mediaType, Digest digest, byte[] bytes) {
        static Blob of(String mediaType, byte[] bytes) {
            return new Blob(mediaType, Digest.of(bytes), bytes);
        }
    }

    public enum Compression {
        NONE("application/vnd.oci.image.layer.v1.tar"),
        GZIP("application/vnd.oci.image.layer.v1.tar+gzip"),
        ZSTD("application/vnd.oci.image.layer.v1.tar+zstd");

        final String mediaType;

        Compression(String mediaType) {
            this.mediaType = mediaType;
        }
    }

    /** A layer's tar stream, entry by entry. */
    public static final class Layer {
        private final ByteArrayOutputStream tar = new ByteArrayOutputStream();
        private final TarArchiveOutputStream out = new TarArchiveOutputStream(tar);
        private final Compression compression;
        private byte[] raw;

        public Layer(Compression compression) {
            this.compression = compression;
            out.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
            out.setBigNumberMode(TarArchiveOutputStream.BIGNUMBER_POSIX);
        }

        public Layer dir(String path, int mode) throws IOException {
            TarArchiveEntry e = new TarArchiveEntry(path.endsWith("/") ? path : path + "/");
            e.setMode(040000 | mode);
            return entry(e, new byte[0]);
        }

        public Layer file(String path, String content, int mode) throws IOException {
            return file(path, content.getBytes(StandardCharsets.UTF_8), mode);
        }

        public Layer file(String path, byte[] content, int mode) throws IOException {
            TarArchiveEntry e = new TarArchiveEntry(path);
            e.setMode(0100000 | mode);
            e.setSize(content.length);
            return entry(e, content);
        }

        public Layer symlink(String path, String target) throws IOException {
            TarArchiveEntry e = new TarArchiveEntry(path, TarConstants.LF_SYMLINK);
            e.setLinkName(target);
            e.setMode(0120777);
            return entry(e, new byte[0]);
        }

        public Layer hardlink(String path, String target) throws IOException {
            TarArchiveEntry e = new TarArchiveEntry(path, TarConstants.LF_LINK);
            e.setLinkName(target);
            return entry(e, new byte[0]);
        }

        public Layer charDevice(String path, int major, int minor) throws IOException {
            TarArchiveEntry e = new TarArchiveEntry(path, TarConstants.LF_CHR);
            e.setDevMajor(major);
            e.setDevMinor(minor);
            e.setMode(020666);
            return entry(e, new byte[0]);
        }

        /** A whiteout: {@code path} of the layers below is deleted. */
        public Layer whiteout(String path) throws IOException {
            int slash = path.lastIndexOf('/');
            return file(path.substring(0, slash + 1) + ".wh." + path.substring(slash + 1), new byte[0], 0644);
        }

        /** An opaque directory: what the layers below have in {@code dir} is hidden. */
        public Layer opaque(String dir) throws IOException {
            return file(dir + "/.wh..wh..opq", new byte[0], 0644);
        }

        public Layer entry(TarArchiveEntry e, byte[] content) throws IOException {
            out.putArchiveEntry(e);
            out.write(content);
            out.closeArchiveEntry();
            return this;
        }

        /** Busybox (Debian's busybox-static) at /bin/busybox, with /bin/sh naming it. */
        public Layer busybox() throws IOException {
            Path binary = Path.of("/bin/busybox");
            if (!Files.isRegularFile(binary)) {
                throw new IOException("/bin/busybox is missing: install Debian's busybox-static (.ci/tools does)");
            }
            dir("bin", 0755);
            file("bin/busybox", Files.readAllBytes(binary), 0755);
            for (String applet : List.of("sh", "cat", "echo", "ls", "sleep", "id", "env", "touch", "true")) {
                symlink("bin/" + applet, "busybox");
            }
            return this;
        }

        /** A layer of one header claiming {@code size} bytes for {@code path}, and none of them. */
        public static Layer claiming(String path, long size) throws IOException {
            Layer l = new Layer(Compression.GZIP);
            TarArchiveEntry e = new TarArchiveEntry(path);
            e.setSize(size);
            byte[] header = new byte[512];
            e.writeEntryHeader(
                    header, org.apache.commons.compress.archivers.zip.ZipEncodingHelper.getZipEncoding("UTF-8"), true);
            l.raw = java.util.Arrays.copyOf(header, 512 * 3); // the header, then the end-of-archive blocks
            return l;
        }

        /** The layer as pushed, and its diff ID (the digest of its uncompressed tar). */
        Blob[] finish() throws IOException {
            out.finish();
            byte[] raw = this.raw != null ? this.raw : tar.toByteArray();
            ByteArrayOutputStream packed = new ByteArrayOutputStream();
            try (OutputStream c = switch (compression) {
                case NONE -> packed;
                case GZIP -> new GZIPOutputStream(packed);
                case ZSTD -> new ZstdCompressorOutputStream(packed);
            }) {
                c.write(raw);
            }
            return new Blob[] {Blob.of(compression.mediaType, packed.toByteArray()), Blob.of("diff", raw)};
        }
    }

    private final List<Blob> blobs;
    private final List<TestImage> children;
    private final Blob top;

    private TestImage(List<Blob> blobs, List<TestImage> children, Blob top) {
        this.blobs = blobs;
        this.children = children;
        this.top = top;
    }

    /**
     * An image of {@code layers} whose config gives {@code process} ({@code Entrypoint}, {@code Cmd}, {@code Env},
     * {@code WorkingDir}, {@code User}); an OCI manifest, or a Docker one when {@code docker}.
     */
    public static TestImage of(Map<String, Object> process, boolean docker, Layer... layers) throws IOException {
        return build(process, docker, false, layers);
    }

    /** An image whose config names other diff IDs than its layers unpack to. */
    public static TestImage withWrongDiffIds(Layer... layers) throws IOException {
        return build(Map.of(), false, true, layers);
    }

    private static TestImage build(Map<String, Object> process, boolean docker, boolean lie, Layer... layers)
            throws IOException {
        List<Blob> blobs = new ArrayList<>();
        ArrayNode diffIds = JSON.createArrayNode();
        ArrayNode layerDescriptors = JSON.createArrayNode();
        for (Layer l : layers) {
            Blob[] packed = l.finish();
            blobs.add(packed[0]);
            diffIds.add(
                    lie
                            ? Digest.of("not this layer".getBytes()).toString()
                            : packed[1].digest().toString());
            layerDescriptors.add(descriptor(
                    docker ? "application/vnd.docker.image.rootfs.diff.tar.gzip" : packed[0].mediaType(), packed[0]));
        }
        ObjectNode config = JSON.createObjectNode();
        config.put("architecture", Platform.node().architecture()).put("os", "linux");
        config.set("config", JSON.valueToTree(process));
        config.putObject("rootfs").put("type", "layers").set("diff_ids", diffIds);
        Blob configBlob =
                Blob.of(docker ? Manifests.DOCKER_CONFIG : Manifests.OCI_CONFIG, JSON.writeValueAsBytes(config));
        blobs.add(configBlob);
        ObjectNode manifest = JSON.createObjectNode();
        manifest.put("schemaVersion", 2);
        String type = docker ? Manifests.DOCKER_MANIFEST : Manifests.OCI_MANIFEST;
        manifest.put("mediaType", type);
        manifest.set("config", descriptor(configBlob.mediaType(), configBlob));
        manifest.set("layers", layerDescriptors);
        return new TestImage(blobs, List.of(), Blob.of(type, JSON.writeValueAsBytes(manifest)));
    }

    /** An OCI index of {@code images} by platform ({@code os/arch[/variant]}). */
    public static TestImage index(Map<String, TestImage> images) throws IOException {
        ObjectNode index = JSON.createObjectNode();
        index.put("schemaVersion", 2).put("mediaType", Manifests.OCI_INDEX);
        ArrayNode manifests = index.putArray("manifests");
        List<TestImage> children = new ArrayList<>();
        images.forEach((platform, image) -> {
            String[] p = platform.split("/");
            ObjectNode d = descriptor(image.top.mediaType(), image.top);
            ObjectNode pl = d.putObject("platform").put("os", p[0]).put("architecture", p[1]);
            if (p.length > 2) {
                pl.put("variant", p[2]);
            }
            manifests.add(d);
            children.add(image);
        });
        return new TestImage(List.of(), children, Blob.of(Manifests.OCI_INDEX, JSON.writeValueAsBytes(index)));
    }

    private static ObjectNode descriptor(String mediaType, Blob b) {
        ObjectNode d = JSON.createObjectNode();
        d.put("mediaType", mediaType).put("digest", b.digest().toString()).put("size", b.bytes().length);
        return d;
    }

    public List<Blob> blobs() {
        return blobs;
    }

    public List<TestImage> children() {
        return children;
    }

    /** The manifest (or index) the tag names. */
    public Blob top() {
        return top;
    }
}
