//! The process's runtime folder, set before wgpu looks for GPUs (both entry points call it first).

/// Mesa's Vulkan drivers look for a Wayland display while wgpu lists the GPUs, and print "error:
/// XDG_RUNTIME_DIR is invalid or not set in the environment." (twice) where it is unset, as on a
/// server or in a container: a run that then succeeds seems to report errors of its own. At start,
/// with one thread (setting a variable races other threads' reads), an unset or missing one is
/// pointed at a private empty folder of ours (mode 0700, as the variable requires).
pub(crate) fn for_the_gpu_probe() {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, MetadataExt};
        use std::path::Path;
        if std::env::var_os("XDG_RUNTIME_DIR").is_some_and(|d| Path::new(&d).is_dir()) {
            return;
        }
        let uid = std::fs::metadata("/proc/self").map_or(0, |m| m.uid());
        let dir = std::env::temp_dir().join(format!("attnlab-runtime-{uid}"));
        let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir); // or it is there already
        let ours = std::fs::metadata(&dir)
            .is_ok_and(|m| m.is_dir() && m.uid() == uid && m.mode() & 0o077 == 0);
        if ours {
            std::env::set_var("XDG_RUNTIME_DIR", &dir);
        }
    }
}
