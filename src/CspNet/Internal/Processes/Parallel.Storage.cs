using System;
using System.Threading;
using System.Threading.Tasks;

namespace CspNet;

// Where a parallel keeps its processes and, during a run, the tasks of its async processes.
//
// Why inline: JVMCSP's program makes three parallels of two processes per iteration, millions of
// them. Two processes and their two task slots live in fields; only a third process moves them
// into an array (_first then holds the array: processes in [0, _count), the task of async process
// i in slot _count + i during a run, so it is at least 2 x _count long then). An array of two
// processes and their tasks cost 56 bytes beside a 56-byte parallel; the fields cost 24.
//
// Adds and the start of a run lock the parallel itself (documented in Parallel's remarks): a
// lock object per parallel would cost 24 bytes and its field 8 more, and a few shared lock objects
// picked by the parallel's identity hash cost about 7% of the CPU of creating and starting JVMCSP's
// program (the hash is made on first use, and it also forces a sync block on any later lock of the
// object).
public sealed partial class Parallel
{
    // The first process, or the array of all of them once there are more than two.
    private object? _first;
    private object? _second;
    private Task? _firstTask;
    private Task? _secondTask;
    private int _count;

    /// <summary>Room for <paramref name="count"/> processes (and their tasks), for the constructors.</summary>
    private void Reserve(int count)
    {
        if (count > 2)
        {
            _first = new object?[2 * count];
        }
    }

    /// <summary>Appends a process; the caller holds the parallel's lock or is the constructor.</summary>
    private void Append(object item)
    {
        int count = _count;
        if (_first is object?[] items)
        {
            if (count == items.Length)
            {
                var grown = new object?[Math.Max(4, 2 * items.Length)];
                Array.Copy(items, grown, count);
                _first = items = grown;
            }

            items[count] = item;
        }
        else if (count == 0)
        {
            _first = item;
        }
        else if (count == 1)
        {
            _second = item;
        }
        else
        {
            // A third process: all move into an array, with room for a fourth.
            _first = new object?[] { _first, _second, item, null };
            _second = null;
        }

        Volatile.Write(ref _count, count + 1);
    }

    /// <summary>
    /// Makes room for the tasks of a run, under the parallel's lock: only async processes have one,
    /// so a parallel of nested parallels (the <c>par for</c> of JVMCSP's program) grows nothing.
    /// </summary>
    private void ReserveTaskSlots()
    {
        if (_first is object?[] items && items.Length < 2 * _count && HasProcessesOfKind(asyncProcesses: true))
        {
            var grown = new object?[2 * _count];
            Array.Copy(items, grown, _count);
            _first = grown;
        }
    }

    /// <summary>Process <paramref name="index"/>: stable while a run is in progress (adds are refused then).</summary>
    private object ProcessAt(int index) =>
        _first is object?[] items ? items[index]! : index == 0 ? _first! : _second!;

    /// <summary>Keeps the task of async process <paramref name="index"/> until the run ends.</summary>
    private void SetTask(int index, Task task)
    {
        if (_first is object?[] items)
        {
            items[_count + index] = task;
        }
        else if (index == 0)
        {
            _firstTask = task;
        }
        else
        {
            _secondTask = task;
        }
    }

    /// <summary>Takes the task of process <paramref name="index"/> out of its slot (null if it had none).</summary>
    private Task? TakeTask(int index)
    {
        Task? task;
        if (_first is object?[] items)
        {
            // Slots were reserved only if the parallel has async processes (see ReserveTaskSlots).
            int slot = _count + index;
            if (slot >= items.Length)
            {
                return null;
            }

            task = items[slot] as Task;
            items[slot] = null;
        }
        else if (index == 0)
        {
            task = _firstTask;
            _firstTask = null;
        }
        else
        {
            task = _secondTask;
            _secondTask = null;
        }

        return task;
    }

    /// <summary>Whether there is a thread process, or an async process (neither a thread process nor a nested parallel).</summary>
    private bool HasProcessesOfKind(bool asyncProcesses)
    {
        for (int i = 0; i < _count; i++)
        {
            object process = ProcessAt(i);
            if (asyncProcesses ? process is not (ThreadEntry or Parallel) : process is ThreadEntry)
            {
                return true;
            }
        }

        return false;
    }
}
