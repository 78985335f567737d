using Authpb;
using CspNet.NameServer;
using CspNet.NameServer.Etcd;
using CspNet.Remote.NameServer;
using dotnet_etcd;
using Etcdserverpb;
using Google.Protobuf;

namespace CspNet.Remote.Tests.NameServer;

/// <summary>
/// The etcd registry against an etcd with authentication on (etcd's users and roles): the
/// NameServer's user, its password read from a file, may use its prefix and nothing else; without
/// the password, or with a wrong one, every call is refused with a message that says what to check.
/// </summary>
[RequiresEtcd]
public sealed class EtcdAuthTests : IDisposable
{
    private const string Prefix = "/auth/";
    private const string User = "cspnet-nameserver";

    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("cspnet-etcd-auth-");

    public void Dispose() => _dir.Delete(recursive: true);

    [RegistryFact(Timeout = 60000)]
    public async Task Registry_UserWithPasswordFile_RegistersAndResolvesUnderItsPrefix()
    {
        await using EtcdProcess etcd = await EtcdProcess.StartAsync();
        string password = await EnableAuthAsync(etcd.ClientUrl);
        using var registry = new EtcdNameRegistry(Options(etcd, PasswordFile(password)));

        NameLease lease = await registry.OpenLeaseAsync(new LinkEndpoint("127.0.0.1", 7000), "auth");
        await registry.RegisterAsync(lease.Id, NameRegistryContractTests.Channel("guarded"), returnExisting: false);

        NameEntry? found = await registry.ResolveAsync("guarded", TimeSpan.Zero);
        Assert.NotNull(found);
        Assert.Equal("guarded", found.Name);
    }

    [RegistryFact(Timeout = 60000)]
    public async Task Registry_WrongPassword_IsRefusedNamingTheUserSettings()
    {
        await using EtcdProcess etcd = await EtcdProcess.StartAsync();
        await EnableAuthAsync(etcd.ClientUrl);
        using var registry = new EtcdNameRegistry(Options(etcd, PasswordFile("not-the-password")));

        Exception refused = await Assert.ThrowsAnyAsync<Exception>(() => registry.ResolveAsync("guarded", TimeSpan.Zero));

        Assert.IsType<EtcdRegistryUnavailableException>(refused);
        Assert.Contains("Etcd:Username", refused.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("not-the-password", refused.ToString(), StringComparison.Ordinal);
    }

    [RegistryFact(Timeout = 60000)]
    public async Task Registry_NoCredentials_IsRefused()
    {
        await using EtcdProcess etcd = await EtcdProcess.StartAsync();
        await EnableAuthAsync(etcd.ClientUrl);
        using var anonymous = new EtcdNameRegistry(new EtcdNameRegistryOptions { Endpoints = etcd.ClientUrl, Prefix = Prefix, OperationTimeout = TimeSpan.FromSeconds(3) });

        await Assert.ThrowsAsync<EtcdRegistryUnavailableException>(() => anonymous.ResolveAsync("guarded", TimeSpan.Zero));
    }

    [RegistryFact(Timeout = 60000)]
    public async Task Registry_UserOutsideItsPrefix_IsRefused()
    {
        await using EtcdProcess etcd = await EtcdProcess.StartAsync();
        string password = await EnableAuthAsync(etcd.ClientUrl);
        EtcdNameRegistryOptions options = Options(etcd, PasswordFile(password));
        options.Prefix = "/someone-else/";
        using var registry = new EtcdNameRegistry(options);

        EtcdRegistryUnavailableException refused = await Assert.ThrowsAsync<EtcdRegistryUnavailableException>(() => registry.ResolveAsync("guarded", TimeSpan.Zero));

        Assert.Contains("/someone-else/", refused.Message, StringComparison.Ordinal);
    }

    private static EtcdNameRegistryOptions Options(EtcdProcess etcd, string passwordFile) => new()
    {
        Endpoints = etcd.ClientUrl,
        Prefix = Prefix,
        Username = User,
        PasswordFile = passwordFile,
        OperationTimeout = TimeSpan.FromSeconds(3),
    };

    private string PasswordFile(string password)
    {
        string path = Path.Combine(_dir.FullName, Guid.NewGuid().ToString("N"));
        File.WriteAllText(path, password + "\n");
        if (!OperatingSystem.IsWindows())
        {
            File.SetUnixFileMode(path, UnixFileMode.UserRead | UnixFileMode.UserWrite);
        }

        return path;
    }

    /// <summary>
    /// What an operator does with etcdctl (docs/DEPLOYING.md): a root user, a role that may read and
    /// write the NameServer's prefix, the NameServer's user in it, then authentication on. Returns
    /// the NameServer user's password.
    /// </summary>
    private static async Task<string> EnableAuthAsync(string url)
    {
        string rootPassword = Convert.ToHexString(System.Security.Cryptography.RandomNumberGenerator.GetBytes(16));
        string password = Convert.ToHexString(System.Security.Cryptography.RandomNumberGenerator.GetBytes(16));
        using var admin = new EtcdClient(url);
        await admin.UserAddAsync(new AuthUserAddRequest { Name = "root", Password = rootPassword });
        await admin.UserGrantRoleAsync(new AuthUserGrantRoleRequest { User = "root", Role = "root" });
        await admin.RoleAddAsync(new AuthRoleAddRequest { Name = "cspnet" });
        await admin.RoleGrantPermissionAsync(new AuthRoleGrantPermissionRequest
        {
            Name = "cspnet",
            Perm = new Permission
            {
                PermType = Permission.Types.Type.Readwrite,
                Key = ByteString.CopyFromUtf8(Prefix),
                RangeEnd = ByteString.CopyFromUtf8(Prefix[..^1] + (char)(Prefix[^1] + 1)),
            },
        });
        await admin.UserAddAsync(new AuthUserAddRequest { Name = User, Password = password });
        await admin.UserGrantRoleAsync(new AuthUserGrantRoleRequest { User = User, Role = "cspnet" });
        await admin.AuthEnableAsync(new AuthEnableRequest());
        return password;
    }
}
