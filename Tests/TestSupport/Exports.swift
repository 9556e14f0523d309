// Tests reach the process harness (ChildProcess, FreePort, WorkerProcess, …) through TestSupport, where it lived before the bench needed it.
@_exported import ProcessHarness
