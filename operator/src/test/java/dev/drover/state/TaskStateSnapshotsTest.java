package dev.drover.state;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.v1alpha1.CheckStatus;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.api.v1alpha1.TaskState;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

class TaskStateSnapshotsTest {

    /**
     * A duplicate put is dropped when it equals the store's copy: a field the copy or {@code equals} leaves out would
     * let a changed state be dropped as a duplicate. Every field, set alone, must survive the copy and be told apart.
     */
    @Test
    void everyFieldOfAnEventIsCopiedAndCompared() throws Exception {
        for (Field f : fields(TaskEvent.class)) {
            TaskEvent e = new TaskEvent();
            f.set(e, sample(f));
            TaskEvent copy = TaskStateSnapshots.copy(e);

            assertThat(copy).as(f.getName()).isEqualTo(e);
            f.set(e, other(f));
            assertThat(copy).as(f.getName() + " changed").isNotEqualTo(e);
        }
    }

    @Test
    void everyFieldOfAStateAndItsChecksIsCopiedAndCompared() throws Exception {
        for (Field f : fields(TaskState.class)) {
            TaskState s = new TaskState();
            f.set(s, sample(f));
            TaskState copy = TaskStateSnapshots.copy(s, null);

            assertThat(copy).as(f.getName()).isEqualTo(s);
            f.set(s, other(f));
            assertThat(copy).as(f.getName() + " changed").isNotEqualTo(s);
        }
        for (Field f : fields(CheckStatus.class)) {
            TaskState s = new TaskState();
            CheckStatus check = new CheckStatus();
            f.set(check, sample(f));
            s.setChecks(new ArrayList<>(List.of(check)));
            TaskState copy = TaskStateSnapshots.copy(s, null);

            assertThat(copy).as(f.getName()).isEqualTo(s);
            f.set(check, other(f));
            assertThat(copy).as(f.getName() + " changed").isNotEqualTo(s);
        }
    }

    @Test
    void aNewStateSharesTheEventsItRepeatsWithThePreviousCopy() {
        TaskState first = new TaskState();
        first.setEvents(new ArrayList<>(List.of(event(TaskEventType.Received, "a"))));
        TaskState firstCopy = TaskStateSnapshots.copy(first, null);
        TaskState second = new TaskState();
        second.setEvents(
                new ArrayList<>(List.of(event(TaskEventType.Received, "a"), event(TaskEventType.Started, "b"))));

        TaskState secondCopy = TaskStateSnapshots.copy(second, firstCopy);

        assertThat(secondCopy).isEqualTo(second);
        assertThat(secondCopy.getEvents().getFirst())
                .isSameAs(firstCopy.getEvents().getFirst());
        assertThat(secondCopy.getEvents().get(1)).isNotSameAs(second.getEvents().get(1));
    }

    @Test
    void noListIsNotAnEmptyList() {
        TaskState s = new TaskState();
        s.setEvents(null);

        assertThat(TaskStateSnapshots.copy(s, null).getEvents()).isNull();
        assertThat(TaskStateSnapshots.copy(new TaskState(), null).getEvents()).isEmpty();
    }

    private static TaskEvent event(TaskEventType type, String message) {
        TaskEvent e = new TaskEvent();
        e.setType(type);
        e.setMessage(message);
        return e;
    }

    private static List<Field> fields(Class<?> type) {
        List<Field> out = new ArrayList<>();
        for (Field f : type.getDeclaredFields()) {
            if (!Modifier.isStatic(f.getModifiers())) {
                f.setAccessible(true);
                out.add(f);
            }
        }
        assertThat(out).isNotEmpty();
        return out;
    }

    private static Object sample(Field f) {
        return value(f, UnaryOperator.identity(), 0);
    }

    private static Object other(Field f) {
        return value(f, s -> s + "'", 1);
    }

    private static Object value(Field f, UnaryOperator<String> text, int index) {
        Class<?> type = f.getType();
        if (type == String.class) {
            return text.apply("x");
        }
        if (type == Integer.class) {
            return 7 + index;
        }
        if (type == Boolean.class) {
            return index == 0;
        }
        if (type.isEnum()) {
            return type.getEnumConstants()[index];
        }
        if (type == List.class && f.getGenericType().getTypeName().endsWith("<" + TaskEvent.class.getName() + ">")) {
            TaskEvent e = new TaskEvent();
            e.setMessage(text.apply("event"));
            return new ArrayList<>(List.of(e));
        }
        if (type == List.class && f.getGenericType().getTypeName().endsWith("<" + CheckStatus.class.getName() + ">")) {
            return new ArrayList<>(List.of(new CheckStatus(text.apply("check"), null, null, null)));
        }
        throw new AssertionError("no sample for a field of " + type + ": teach this test, and TaskStateSnapshots");
    }
}
