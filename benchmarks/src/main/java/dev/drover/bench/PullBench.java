package dev.drover.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.cli.flags.Flag;
import dev.drover.cli.flags.FlagParser;
import dev.drover.cli.flags.HelpText;
import dev.drover.cli.flags.ParsedArgs;
import dev.drover.cli.flags.UsageError;
import dev.drover.common.UserText;
import dev.drover.image.ImageReference;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * {@code java -jar drover-bench.jar pull [--runs N] [--registry-ca-file FILE] IMAGE}: times the agent's pull of
 * IMAGE into an empty image store, N times, each store a new directory removed afterwards; prints one JSON line
 * with each run's seconds, bytes and MB/s and their medians (docs/BENCHMARKS.md).
 */
final class PullBench {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** The most runs one call makes. */
    static final int MAX_RUNS = 100;

    static final Flag RUNS = Flag.valued("--runs", null, "N", "how many pulls, each into an empty store (default 3)");
    static final Flag CA =
            Flag.valued("--registry-ca-file", null, "FILE", "a CA (PEM) the registry's certificate may chain to");
    static final List<Flag> FLAGS = List.of(RUNS, CA, FlagParser.HELP);

    /** The subcommand's arguments: {@code runs} pulls of {@code image}, trusting {@code registryCaFile} or not. */
    record Options(String image, int runs, Path registryCaFile, boolean help) {}

    private PullBench() {}

    static Options parse(List<String> args) throws UsageError {
        ParsedArgs p = FlagParser.parse(FLAGS, args, false);
        if (p.help()) {
            return new Options(null, 0, null, true);
        }
        if (p.positional().size() != 1) {
            throw new UsageError("pull takes one image, not " + p.positional().size() + " arguments");
        }
        String image = p.positional().getFirst();
        try {
            ImageReference.parse(image);
        } catch (IllegalArgumentException e) {
            throw new UsageError(e.getMessage());
        }
        int runs = 3;
        if (p.value(RUNS.name()) != null) {
            try {
                runs = Integer.parseInt(p.value(RUNS.name()));
            } catch (NumberFormatException e) {
                runs = 0;
            }
            if (runs < 1 || runs > MAX_RUNS) {
                throw new UsageError("--runs needs a whole number from 1 to " + MAX_RUNS + ", not "
                        + UserText.quote(p.value(RUNS.name())));
            }
        }
        Path ca = null;
        if (p.value(CA.name()) != null) {
            ca = Path.of(p.value(CA.name())).toAbsolutePath();
            if (!Files.isRegularFile(ca)) {
                throw new UsageError("--registry-ca-file names no file: " + UserText.quote(p.value(CA.name())));
            }
        }
        return new Options(image, runs, ca, false);
    }

    static String usage() {
        return "usage: java -jar drover-bench.jar pull [--runs N] [--registry-ca-file FILE] IMAGE\n\n"
                + "times the agent's pull of IMAGE (manifest, layers fetched and checked, unpacked) into an empty\n"
                + "image store, N times, and prints one JSON line: each run's seconds, bytes and mbPerSecond\n"
                + "(10^6 bytes fetched per second), and medianSeconds and medianMBPerSecond\n\n"
                + "flags:\n" + HelpText.flags(FLAGS);
    }

    /** Runs the subcommand: 0 when every pull succeeded. */
    static int run(List<String> args, PrintStream out, PrintStream err) throws Exception {
        Options o = parse(args);
        if (o.help()) {
            out.print(usage());
            return 0;
        }
        ObjectNode result = JSON.createObjectNode();
        result.put("image", o.image());
        ArrayNode runs = result.putArray("runs");
        List<Double> seconds = new ArrayList<>();
        List<Double> rates = new ArrayList<>();
        for (int i = 0; i < o.runs(); i++) {
            Path store = Files.createTempDirectory("drover-bench-pull");
            try {
                ImagePulls.Pulled p = ImagePulls.pull(store, o.image(), o.registryCaFile());
                double rate = p.bytes() / 1e6 / p.seconds();
                runs.addObject()
                        .put("seconds", Bench.round(p.seconds()))
                        .put("bytes", p.bytes())
                        .put("mbPerSecond", Bench.round(rate));
                seconds.add(p.seconds());
                rates.add(rate);
            } finally {
                removeTree(store);
            }
        }
        result.put("medianSeconds", Bench.round(median(seconds)));
        result.put("medianMBPerSecond", Bench.round(median(rates)));
        out.println(JSON.writeValueAsString(result));
        return 0;
    }

    static double median(List<Double> values) {
        List<Double> sorted = values.stream().sorted().toList();
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    /** Removes {@code dir} and everything in it, links as links (never followed). */
    private static void removeTree(Path dir) throws IOException {
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
