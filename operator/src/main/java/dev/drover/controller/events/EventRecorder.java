package dev.drover.controller.events;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.CheckStatus;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.common.UserText;
import dev.drover.concurrent.Worker;
import dev.drover.ratelimit.TokenBucket;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.security.SecureRandom;
import java.time.Instant;
import java.time.InstantSource;
import java.time.temporal.ChronoUnit;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records task events as Kubernetes Events on their Allocation, so {@code kubectl
 * describe alloc} shows the history (the agent's {@code events.taskEvents}): every Warning at once and the Normal
 * task events of one allocation that come close together as one Event ({@link TaskEventFilter#FOLDED}, the
 * {@link EventFolds} this recorder's writer also closes), every task event its own Event ({@link TaskEventFilter#ALL})
 * or Warnings only ({@link TaskEventFilter#NOTABLE}). A repeat (the same
 * allocation, task, reason and message: a task restarting again and again) updates one object's count rather than
 * creating a new one each time. An Event's name begins with the allocation's and then the time it first happened,
 * so the API server, which lists by name, lists an allocation's Events in the order they happened: {@code kubectl
 * describe} orders them by their second-precise {@code lastTimestamp} and leaves those of one second (a task's
 * Received, TaskSetup and Started) in the order it got them.
 * The name also carries this recorder's incarnation, so an agent that restarts
 * starts new series rather than meeting its predecessor's: it only ever patches
 * Events it created and knows the count of, and needs neither {@code get} on
 * Events nor a read before a write (as the kubelet's recorder).
 * {@link #record} never blocks: one thread writes, at most as fast as its
 * {@link EventRate} allows, and when the queue is full (in entries or in characters)
 * new events are dropped and counted. One allocation gets at most
 * {@link #PER_ALLOCATION} Events, a fold counting as one (a task restarting a hundred times a second would
 * otherwise fill the queue and spend the node's whole rate): past it, its events
 * are dropped and counted, as the kubelet's spam filter does; its status still
 * counts every restart. Messages are cut at {@link #MESSAGE_LIMIT} characters.
 * Every Event names this node as its source ({@code source.host} and {@code reportingInstance}): the chart's
 * node confinement policy refuses an agent's Event that does not, and a patch of one that did not.
 */
public final class EventRecorder implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(EventRecorder.class);
    static final String COMPONENT = "drover-agent";
    static final int QUEUE = 10_000;
    /** What queued messages may hold in all (about 2 bytes a character). */
    static final long QUEUE_CHARS = 2_000_000;
    /** The kubelet's bound on an Event's message. */
    static final int MESSAGE_LIMIT = 1024;
    /** Events one allocation may cause: a start of many tasks fits the burst; a restart storm gets 2 a second. */
    static final EventRate PER_ALLOCATION = new EventRate(2, 100);
    /** Task events that tell of a failure: Warning Events. */
    static final Set<TaskEventType> WARNINGS = Set.of(
            TaskEventType.SetupFailure,
            TaskEventType.FailedValidation,
            TaskEventType.DriverFailure,
            TaskEventType.NotRestarting,
            TaskEventType.FailedRestoringTask,
            TaskEventType.SiblingTaskFailed,
            TaskEventType.PullFailed);

    /** Where Events go: the Kubernetes side creates and patches them ({@link EventPoster}). */
    public interface Sink {
        /** Creates {@code event}; false, creating nothing, when an Event of its name exists already. */
        boolean create(Event event);

        /** Merge-patches the count and time of an Event this recorder created; false when it is gone (expired). */
        boolean patch(Event patch);
    }

    /**
     * One Event to write: {@code reason} and {@link #message} as kubectl shows them. A task's event keeps the task's
     * name and its own text (the very string its status holds) and makes the message only as it is written: a burst
     * of thousands of allocations queues tens of thousands of them.
     *
     * @param task the task whose event this is; null for an allocation's own
     * @param text the task event's message (cut once, with the task's name, in {@link #message}), or the allocation
     *     event's or the fold's whole message, at most {@link #MESSAGE_LIMIT}
     * @param time when it first happened
     * @param last when it last happened: a fold's newest event
     */
    record Pending(Allocation owner, String type, String reason, String task, String text, Instant time, Instant last) {

        /** A task's event. */
        Pending(Allocation owner, String type, String reason, String task, String text, Instant time) {
            this(owner, type, reason, task, text, time, time);
        }

        /** An allocation's own Event. */
        Pending(Allocation owner, String type, String reason, String message, Instant time) {
            this(owner, type, reason, null, message, time, time);
        }

        String name(String incarnation) {
            return EventNames.eventName(owner, reason, message(), time, incarnation);
        }

        /** The Event of a closed fold. */
        static Pending of(EventFolds.Fold f) {
            return new Pending(f.owner, "Normal", f.reason(), null, f.message(MESSAGE_LIMIT), f.first, f.last);
        }

        String message() {
            return task == null ? text : UserText.cut("Task " + task + ": " + text, MESSAGE_LIMIT);
        }

        /** The length of {@link #message}, without making it. */
        int messageLength() {
            return task == null
                    ? text.length()
                    : Math.min(MESSAGE_LIMIT, "Task : ".length() + task.length() + text.length());
        }
    }

    private final Sink sink;
    private final String node;
    private final TaskEventFilter taskEvents;
    private final BlockingQueue<Pending> queue = new ArrayBlockingQueue<>(QUEUE);
    /** Open folds of Normal task events, at most as many as the queue holds; guarded by itself. */
    private final EventFolds folds = new EventFolds(QUEUE);
    /** Nanosecond ticks: {@link System#nanoTime()} but in tests. */
    private final LongSupplier ticker;
    /** An Event this recorder created and how often it has counted it. */
    private record Series(String name, int count) {}

    /** The series this recorder writes, by their first name, so a repeat is a patch without a read first. */
    private final Map<String, Series> series = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Series> eldest) {
            return size() > 50_000;
        }
    };
    /** Told apart from every earlier agent on this node: part of every Event name. */
    private final String incarnation;
    /** Per allocation (by uid), the newest few thousand; guarded by itself. */
    private final Map<String, TokenBucket> perAllocation = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, TokenBucket> eldest) {
            return size() > 10_000;
        }
    };

    private final AtomicLong queuedChars = new AtomicLong();
    private final LongAdder written = new LongAdder();
    private final LongAdder dropped = new LongAdder();
    private final LongAdder failed = new LongAdder();
    /** The writer's rate; writer thread only. */
    private final TokenBucket bucket;

    private final Worker worker;

    public EventRecorder(Sink sink, String node) {
        this(sink, node, EventRate.DEFAULT);
    }

    public EventRecorder(Sink sink, String node, EventRate rate) {
        this(sink, node, rate, TaskEventFilter.FOLDED);
    }

    public EventRecorder(Sink sink, String node, EventRate rate, TaskEventFilter taskEvents) {
        this(sink, node, rate, taskEvents, HexFormat.of().toHexDigits(new SecureRandom().nextLong()));
    }

    EventRecorder(Sink sink, String node, EventRate rate, TaskEventFilter taskEvents, String incarnation) {
        this(sink, node, rate, taskEvents, incarnation, System::nanoTime);
    }

    EventRecorder(
            Sink sink,
            String node,
            EventRate rate,
            TaskEventFilter taskEvents,
            String incarnation,
            LongSupplier ticker) {
        this.sink = sink;
        this.node = node;
        this.taskEvents = taskEvents;
        this.ticker = ticker;
        this.bucket = rate.bucket(ticker.getAsLong());
        this.incarnation = incarnation;
        this.worker = Worker.startVirtual("drover-events", self -> writeNext());
    }

    /** A metadata-only copy of {@code a}: what an Event needs to point at it. */
    public static Allocation owner(Allocation a) {
        Allocation o = new Allocation();
        o.setMetadata(new ObjectMetaBuilder()
                .withName(a.getMetadata().getName())
                .withNamespace(a.getMetadata().getNamespace())
                .withUid(a.getMetadata().getUid())
                .build());
        return o;
    }

    /** A task event of {@code task}, unless this recorder's {@link TaskEventFilter} leaves it to status; never blocks. */
    public void record(Allocation owner, String task, TaskEvent event, InstantSource clock) {
        boolean warning = WARNINGS.contains(event.getType())
                || (event.getType() == TaskEventType.Terminated
                        && ((event.getExitCode() != null && event.getExitCode() != 0) || event.getSignal() != null))
                || (event.getType() == TaskEventType.CheckStatusChanged
                        && event.getCheckStatus() != CheckStatus.Status.PASSING);
        if (!taskEvents.records(warning)) {
            return;
        }
        if (taskEvents != TaskEventFilter.FOLDED) {
            recordAlone(owner, task, event, clock, warning);
            return;
        }
        String key = keyOf(owner);
        if (!warning) {
            Instant time = timeOf(event, clock);
            synchronized (folds) {
                queueFold(folds.add(key, owner, task, event.getType(), textOf(event), time, ticker.getAsLong()));
            }
            return;
        }
        synchronized (folds) { // nothing of the allocation is queued between its fold and its Warning
            queueFold(folds.close(key)); // first, so that its Events keep the order they happened in
            recordAlone(owner, task, event, clock, true);
        }
    }

    private static String textOf(TaskEvent event) {
        return event.getMessage() != null ? event.getMessage() : event.getType().name();
    }

    private void recordAlone(Allocation owner, String task, TaskEvent event, InstantSource clock, boolean warning) {
        if (!allocationMayRecord(owner)) {
            dropped.increment(); // before its time is parsed: a restart storm drops most of its events here
            return;
        }
        queue(new Pending(
                owner,
                warning ? "Warning" : "Normal",
                event.getType().name(),
                task,
                textOf(event),
                timeOf(event, clock)));
    }

    /** An allocation-level event (e.g. a refused spec); never blocks. */
    public void recordForAllocation(Allocation owner, boolean warning, String reason, String message, Instant time) {
        if (!allocationMayRecord(owner)) {
            dropped.increment();
            return;
        }
        queue(new Pending(owner, warning ? "Warning" : "Normal", reason, UserText.cut(message, MESSAGE_LIMIT), time));
    }

    /** Queues {@code p}, which its allocation may record, unless the queue is full (a task's message is cut later). */
    private void queue(Pending p) {
        long chars = charsOf(p);
        if (queuedChars.addAndGet(chars) > QUEUE_CHARS || !queue.offer(p)) {
            queuedChars.addAndGet(-chars);
            dropped.increment();
        }
    }

    /** Queues the Event of a closed fold, a null one being none; its allocation spends one Event on it. */
    private void queueFold(EventFolds.Fold f) {
        if (f == null) {
            return;
        }
        if (!allocationMayRecord(f.owner)) {
            dropped.increment();
            return;
        }
        queue(Pending.of(f));
    }

    private static String keyOf(Allocation owner) {
        return owner.getMetadata().getUid() != null
                ? owner.getMetadata().getUid()
                : owner.getMetadata().getNamespace() + "/" + owner.getMetadata().getName();
    }

    private boolean allocationMayRecord(Allocation owner) {
        String key = keyOf(owner);
        long now = ticker.getAsLong();
        synchronized (perAllocation) {
            return perAllocation
                    .computeIfAbsent(key, k -> PER_ALLOCATION.bucket(now))
                    .tryTake(now);
        }
    }

    private static long charsOf(Pending p) {
        return p.messageLength() + p.reason().length();
    }

    public long written() {
        return written.sum();
    }

    public long dropped() {
        return dropped.sum();
    }

    public long failed() {
        return failed.sum();
    }

    private static Instant timeOf(TaskEvent e, InstantSource clock) {
        try {
            return e.getTime() == null ? clock.instant() : Instant.parse(e.getTime());
        } catch (RuntimeException bad) {
            return clock.instant();
        }
    }

    /**
     * Queues the folds whose time came and writes the next queued event when the rate allows; waits for one at most
     * until the next fold's time or {@link EventFolds#QUIET}, before which no fold opened meanwhile closes.
     */
    private void writeNext() throws InterruptedException {
        long wait;
        synchronized (folds) {
            long now = ticker.getAsLong();
            folds.closeDue(now).forEach(this::queueFold);
            long next = folds.nextDeadline();
            wait = next == Long.MAX_VALUE
                    ? EventFolds.QUIET.toNanos()
                    : Math.clamp(next - now, 0, EventFolds.QUIET.toNanos());
        }
        Pending p = queue.poll(wait, TimeUnit.NANOSECONDS);
        if (p != null) {
            queuedChars.addAndGet(-charsOf(p));
            TimeUnit.NANOSECONDS.sleep(bucket.take(ticker.getAsLong()));
            write(p);
        }
    }

    private void write(Pending p) {
        String ns = p.owner().getMetadata().getNamespace();
        String key = EventNames.seriesKey(p.owner(), p.reason(), p.message(), incarnation);
        String at = p.last().truncatedTo(ChronoUnit.SECONDS).toString();
        try {
            Series known = series.get(key);
            if (known == null) {
                series.put(key, new Series(create(p, p.name(incarnation)), 1));
                written.increment();
                return;
            }
            int next = known.count() + 1;
            // the patch is given whole, so the client sends it without reading the Event first
            Event patch = new EventBuilder()
                    .withNewMetadata()
                    .withName(known.name())
                    .withNamespace(ns)
                    .endMetadata()
                    .withCount(next)
                    .withLastTimestamp(at)
                    .build();
            if (!sink.patch(patch)) {
                failed.increment();
                series.remove(key); // expired by the API server: the next repeat creates it again
                LOG.warn(
                        "cannot record event {} on allocation {}/{}: its Event expired",
                        p.reason(),
                        ns,
                        p.owner().getMetadata().getName());
                return;
            }
            series.put(key, new Series(known.name(), next));
            written.increment();
        } catch (KubernetesClientException e) {
            failed.increment();
            LOG.warn(
                    "cannot record event {} on allocation {}/{}: {}",
                    p.reason(),
                    ns,
                    p.owner().getMetadata().getName(),
                    e.getMessage());
        }
    }

    /**
     * Creates the Event named {@code name}, or, when one of that name exists already (a series this
     * recorder forgot, having counted more than it keeps), a new series beside it; returns the name used.
     */
    private String create(Pending p, String name) {
        if (sink.create(newEvent(p, name))) {
            return name;
        }
        String fresh = p.name(incarnation + "/" + System.nanoTime());
        if (!sink.create(newEvent(p, fresh))) {
            throw new KubernetesClientException("an Event named " + fresh + " exists already");
        }
        return fresh;
    }

    private Event newEvent(Pending p, String name) {
        ObjectReference ref = new ObjectReferenceBuilder()
                .withApiVersion(p.owner().getApiVersion())
                .withKind(p.owner().getKind())
                .withNamespace(p.owner().getMetadata().getNamespace())
                .withName(p.owner().getMetadata().getName())
                .withUid(p.owner().getMetadata().getUid())
                .build();
        return new EventBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(p.owner().getMetadata().getNamespace())
                .endMetadata()
                .withInvolvedObject(ref)
                .withReason(p.reason())
                .withMessage(p.message())
                .withType(p.type())
                .withFirstTimestamp(p.time().truncatedTo(ChronoUnit.SECONDS).toString())
                .withLastTimestamp(p.last().truncatedTo(ChronoUnit.SECONDS).toString())
                .withCount(1)
                .withNewSource()
                .withComponent(COMPONENT)
                .withHost(node)
                .endSource()
                .withReportingComponent("drover.dev/agent")
                .withReportingInstance(node)
                .build();
    }

    /** Stops the writer; queued events and open folds not yet written are dropped and counted. Joins the thread. */
    @Override
    public void close() {
        worker.close();
        synchronized (folds) {
            dropped.add(folds.clear() + queue.size());
            queue.clear();
        }
    }
}
