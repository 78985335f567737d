using System.Buffers;
using System.Text;
using CspNet.Remote.Internal.Serialization;

namespace CspNet.Remote.Tests.Serialization;

/// <summary>
/// A <c>byte[]</c> value received straight into its own array (from a bulk lane): the bytes codec
/// hands that array out as the value, once; any other codec reads the same encoding as plain bytes.
/// </summary>
public class ReceivedBytesTests
{
    [Fact]
    public void Read_BytesCodecOnReceivedBytes_IsTheReceivedArrayItself()
    {
        byte[] received = [5, 6, 7, 8];

        byte[]? value = new BytesCodec().Read(ReceivedBytes.Encoding(received));

        Assert.Same(received, value);
        Assert.Equal(new byte[] { 5, 6, 7, 8 }, value);
    }

    [Fact]
    public void Read_SameReceivedEncodingTwice_SecondValueIsACopy()
    {
        byte[] received = [1, 2, 3];
        ReadOnlySequence<byte> encoding = ReceivedBytes.Encoding(received);
        var codec = new BytesCodec();

        byte[]? first = codec.Read(encoding);
        byte[]? second = codec.Read(encoding);

        Assert.Same(received, first);
        Assert.NotSame(received, second);
        Assert.Equal(received, second);
    }

    [Fact]
    public void Read_StringCodecOnReceivedBytes_ReadsTheBytesAsItsOwnEncoding()
    {
        byte[] received = Encoding.UTF8.GetBytes("héllo");

        Assert.Equal("héllo", new StringCodec().Read(ReceivedBytes.Encoding(received)));
    }

    [Fact]
    public void Encoding_ReceivedBytes_IsThePresenceByteThenTheBytes()
    {
        Assert.Equal(new byte[] { 1, 9, 8 }, ReceivedBytes.Encoding([9, 8]).ToArray());
        Assert.Equal(new byte[] { 1 }, ReceivedBytes.Encoding([]).ToArray());
    }
}
