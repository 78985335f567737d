using CspNet.Remote.Internal.Workers;

namespace CspNet.Remote.Tests.Workers;

/// <summary>The pool's image store is bounded: least recently used images go first, images waiting jobs need never do.</summary>
public sealed class ImageStoreTests
{
    private const long Cap = 16L << 20;
    private const int ImageSize = 1 << 20;

    [Fact]
    public void Add_TwoHundredDistinctJunkImages_StoreStaysUnderItsCap()
    {
        using var cache = new ShippedCodeCache(TimeSpan.FromMinutes(5), Cap);
        var added = new List<ShippedAssembly>();

        for (int i = 0; i < 200; i++)
        {
            (ShippedAssembly assembly, byte[] image) = Junk(i);
            cache.Add(assembly, image);
            added.Add(assembly);
            Assert.True(cache.StoreBytes <= Cap, $"after {i + 1} images the store holds {cache.StoreBytes} bytes, over its cap of {Cap}");
        }

        Assert.Equal(Cap, cache.StoreBytes);
        Assert.Equal(added[..184], cache.Missing(added[..184]));    // the least recently used were dropped
        Assert.Empty(cache.Missing(added[184..]));                  // the newest 16 are kept
    }

    [Fact]
    public void Add_StoreFullOfPinnedImages_RefusedAsStoreFullAndThePinnedKept()
    {
        using var cache = new ShippedCodeCache(TimeSpan.FromMinutes(5), 2 * ImageSize);
        (ShippedAssembly first, byte[] firstImage) = Junk(1);
        (ShippedAssembly second, byte[] secondImage) = Junk(2);
        (ShippedAssembly third, byte[] thirdImage) = Junk(3);
        cache.Pin([first]);
        cache.Pin([second]);
        cache.Add(first, firstImage);
        cache.Add(second, secondImage);

        ShippingRefusedException refused = Assert.Throws<ShippingRefusedException>(() => cache.Add(third, thirdImage));

        Assert.Equal(ShippingRefusal.StoreFull, refused.Reason);
        Assert.Contains("MaxImageStoreBytes", refused.Message, StringComparison.Ordinal);
        Assert.Empty(cache.Missing([first, second]));

        cache.Unpin([first]);
        cache.Add(third, thirdImage);

        Assert.Equal([first], cache.Missing([first, second, third]));
        Assert.Equal(2L * ImageSize, cache.StoreBytes);
    }

    [Fact]
    public void Pin_HeldImage_MakesItTheMostRecentlyUsed()
    {
        using var cache = new ShippedCodeCache(TimeSpan.FromMinutes(5), 2 * ImageSize);
        (ShippedAssembly first, byte[] firstImage) = Junk(1);
        (ShippedAssembly second, byte[] secondImage) = Junk(2);
        (ShippedAssembly third, byte[] thirdImage) = Junk(3);
        cache.Add(first, firstImage);
        cache.Add(second, secondImage);

        Assert.Empty(cache.Pin([first]));
        cache.Unpin([first]);
        cache.Add(third, thirdImage);

        Assert.Equal([second], cache.Missing([first, second, third]));
    }

    // A distinct image of ImageSize bytes that is no assembly: the store takes it by its hash alone.
    private static (ShippedAssembly Assembly, byte[] Image) Junk(int seed)
    {
        byte[] image = new byte[ImageSize];
        new Random(seed).NextBytes(image);
        return (new ShippedAssembly("Junk" + seed, ProcessPacker.Sha256Of(image)), image);
    }
}
