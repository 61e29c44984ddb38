// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import "../contracts/IIdentityRegistry.sol";

/// A test Identity Registry: just enough ERC-721 (owners, per-token approval,
/// operators, transfers) for agents to be owned and operated, and the
/// registration calls of ERC-8004. Written for the tests, not for a chain.
contract IdentityRegistry is IIdentityRegistry {
    event Transfer(address indexed from, address indexed to, uint256 indexed tokenId);
    event Approval(address indexed owner, address indexed approved, uint256 indexed tokenId);
    event ApprovalForAll(address indexed owner, address indexed operator, bool approved);

    uint256 private _next;
    mapping(uint256 => address) private _owner;
    mapping(address => uint256) private _balance;
    mapping(uint256 => address) private _approved;
    mapping(address => mapping(address => bool)) private _operators;
    mapping(uint256 => string) private _uri;

    function name() external pure returns (string memory) { return "AgentIdentity"; }
    function symbol() external pure returns (string memory) { return "AGENT"; }

    function register(string calldata agentURI) external returns (uint256 agentId) {
        agentId = _next++;
        _owner[agentId] = msg.sender;
        _balance[msg.sender] += 1;
        _uri[agentId] = agentURI;
        emit Transfer(address(0), msg.sender, agentId);
        emit Registered(agentId, agentURI, msg.sender);
    }

    function setAgentURI(uint256 agentId, string calldata newURI) external {
        require(_authorized(msg.sender, agentId), "not authorized");
        _uri[agentId] = newURI;
        emit URIUpdated(agentId, newURI, msg.sender);
    }

    function ownerOf(uint256 agentId) public view returns (address owner) {
        owner = _owner[agentId];
        require(owner != address(0), "no such agent");
    }

    function balanceOf(address owner) external view returns (uint256) { return _balance[owner]; }

    function tokenURI(uint256 agentId) external view returns (string memory) {
        ownerOf(agentId);
        return _uri[agentId];
    }

    function getApproved(uint256 agentId) public view returns (address) {
        ownerOf(agentId);
        return _approved[agentId];
    }

    function isApprovedForAll(address owner, address operator) public view returns (bool) {
        return _operators[owner][operator];
    }

    function approve(address to, uint256 agentId) external {
        address owner = ownerOf(agentId);
        require(msg.sender == owner || _operators[owner][msg.sender], "not authorized");
        _approved[agentId] = to;
        emit Approval(owner, to, agentId);
    }

    function setApprovalForAll(address operator, bool approved) external {
        _operators[msg.sender][operator] = approved;
        emit ApprovalForAll(msg.sender, operator, approved);
    }

    function transferFrom(address from, address to, uint256 agentId) external {
        require(_authorized(msg.sender, agentId), "not authorized");
        require(ownerOf(agentId) == from, "not the owner");
        require(to != address(0), "zero address");
        delete _approved[agentId];
        _balance[from] -= 1;
        _balance[to] += 1;
        _owner[agentId] = to;
        emit Transfer(from, to, agentId);
    }

    /// The ERC-8004 helper: the owner, the approved address or an operator.
    function isAuthorizedOrOwner(address spender, uint256 agentId) public view returns (bool) {
        return _authorized(spender, agentId);
    }

    function _authorized(address spender, uint256 agentId) private view returns (bool) {
        address owner = ownerOf(agentId);
        return spender == owner || _approved[agentId] == spender || _operators[owner][spender];
    }
}
