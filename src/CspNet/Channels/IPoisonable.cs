namespace CspNet;

/// <summary>Something a process can poison to shut down the part of the network behind it.</summary>
public interface IPoisonable
{
    /// <summary>
    /// Poisons the object: every party blocked on it and every later operation on it fails with
    /// <see cref="PoisonException"/>. Poisoning twice has no further effect.
    /// </summary>
    void Poison();
}
