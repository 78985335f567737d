using Xunit;

// One schedule at a time: the scheduling points reach the scheduler through one static hook.
[assembly: CollectionBehavior(DisableTestParallelization = true)]
