using System.Threading;
using System.Threading.Tasks;

namespace CspNet.Remote.Internal.Client;

/// <summary>A channel end whose channel lives in another program: it can be detached from there while this program goes on.</summary>
internal interface IDetachableEnd
{
    /// <summary>Detaches the end (once) and waits until its place at the home is free; see <see cref="EndDetachment"/>.</summary>
    Task DetachAsync(CancellationToken cancellationToken);
}
