/**
 * Task cgroups (issue 20): {@link dev.drover.cgroups.Cgroups#detect()} learns at start whether the node uses
 * cgroup v1 or v2 and where; {@link dev.drover.cgroups.Cgroups#create} makes a task's cgroup under a
 * {@link dev.drover.cgroups.CgroupParent}, {@link dev.drover.cgroups.Cgroups#find} finds it again after a restart;
 * a {@link dev.drover.cgroups.Cgroup} takes limits and processes, reports usage and OOM kills, kills everything in
 * it and is removed.
 *
 * <p>A leaf: it uses only the JDK and {@code dev.drover.common}. Drivers use it; it knows nothing of tasks. What
 * cgroup files say is read bounded and parsed strictly, and no link in a cgroup tree is followed. Tests replace
 * the kernel with a fake tree and a {@link dev.drover.cgroups.ProcessControl} that plays the kernel's part.
 */
package dev.drover.cgroups;
